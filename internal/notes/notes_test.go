package notes

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		text string
		want Note
		ok   bool
	}{
		{CancelText("emails#2", "a\nb"), Note{Cancel: Job{Queue: "emails#2", ID: "a\nb"}}, true},
		{Restart, Note{Restart: true}, true},
		{"cancel\nno-id", Note{}, false},
		{"later", Note{}, false},
	} {
		got, ok := parse(tc.text)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parse(%q) = %+v, %v; want %+v, %v", tc.text, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBoxOverflowCatchesUp(t *testing.T) {
	b := NewBox()
	for i := range Max + 1 {
		b.Put(Note{Cancel: Job{Queue: "q", ID: string(rune('a' + i%26))}})
	}
	<-b.Ready()
	cancels, restart, catchUp := b.Take()
	if len(cancels) != Max || restart || !catchUp {
		t.Fatalf("Take = %d cancels, restart %v, catchUp %v; want %d, false, true", len(cancels), restart, catchUp, Max)
	}
	if c, r, u := b.Take(); c != nil || r || u {
		t.Fatalf("second Take = %v, %v, %v; want empty", c, r, u)
	}
}
