package laravel

import "testing"

func TestLowerFirst(t *testing.T) {
	for in, want := range map[string]string{
		"UserID": "userID", "Email": "email", "URL": "url", "URLPath": "urlPath",
		"ID": "id", "X": "x", "already": "already", "HTTPServer2": "httpServer2",
	} {
		if got := lowerFirst(in); got != want {
			t.Errorf("lowerFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
