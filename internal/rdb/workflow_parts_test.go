package rdb

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A wide workflow's parts hold up to WfPartSteps entries naming up to
// WfPartParents parents: a fan-in of 10,000 is an entry of its own,
// linked to its parents by link entries that name each parent once, after
// the fan-in's entry.
func TestWorkflowPartsNameABoundedNumberOfParents(t *testing.T) {
	const kids = 10_000
	steps := []WfStep{{ID: "root", Job: []byte("j")}}
	var ids []string
	for i := range kids {
		id := fmt.Sprint("k", i)
		ids = append(ids, id)
		steps = append(steps, WfStep{ID: id, Job: []byte("j"), Waits: "root"})
	}
	// each child named twice: a need and a wait
	steps = append(steps, WfStep{ID: "sum", Job: []byte("j"), Needs: strings.Join(ids, ","), Waits: strings.Join(ids, ","), MayFail: true})
	require.True(t, wfWide(steps))
	require.False(t, wfWide(steps[:WfPartSteps]))

	parts := wfParts(wfEntries(steps))
	linked := map[string]int{}
	var sumAt, entries int
	for _, p := range parts {
		require.LessOrEqual(t, len(p), WfPartSteps)
		named := 0
		for _, e := range p {
			entries++
			switch {
			case e.args[0] == "sum" && e.args[4] == "1-10000":
				sumAt = entries
				require.Equal(t, 1, e.weight)
				named++
			case e.args[4] == "+":
				require.Equal(t, "sum", e.args[0])
				require.Greater(t, entries, sumAt, "a link entry comes after its step's")
				require.NotZero(t, sumAt)
				for _, p := range strings.Split(e.args[2].(string), ",") {
					linked[p]++
				}
				named += e.weight
			default:
				named += e.weight
			}
		}
		require.LessOrEqual(t, named, WfPartParents)
	}
	require.Len(t, linked, kids)
	for _, id := range ids {
		require.Equal(t, 1, linked[id], id)
	}
	require.Equal(t, kids+2+kids/WfPartParents, entries)

	// A step named with fewer parents than a part names stays whole.
	small := wfEntries(steps[:3])
	require.Len(t, small, 3)
	require.Equal(t, [6]any{"k1", []byte("j"), "", "root", "", ""}, small[2].args)
}
