package rdb

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAccessOfURLsNamingSeveralServers(t *testing.T) {
	for _, tc := range []struct {
		url, user, password, serverName string
	}{
		{"redis+sentinel://s1.example:26379,s2.example:26379/mymaster", "", "", ""},
		{"rediss+sentinel://ops:secret@s1.example:26379,s2.example:26379/mymaster", "ops", "secret", "s1.example"},
		{"redis+cluster://:secret@n1.example:7000,n2.example:7001", "", "secret", ""},
		{"rediss+cluster://n1.example:7000,n2.example:7001", "", "", "n1.example"},
	} {
		u, err := url.Parse(tc.url)
		require.NoError(t, err)
		user, password, tls := access(u)
		require.Equal(t, tc.user, user, tc.url)
		require.Equal(t, tc.password, password, tc.url)
		if tc.serverName == "" {
			require.Nil(t, tls, tc.url)
			continue
		}
		require.NotNil(t, tls, tc.url)
		require.Equal(t, tc.serverName, tls.ServerName, tc.url)
	}
}
