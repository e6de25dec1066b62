package phpserial_test

import (
	"fmt"

	"github.com/jobgen/jobgen/laravel/phpserial"
)

func Example() {
	// What PHP's serialize() writes for an object with a public, a
	// protected and a private property, and a second use of an object.
	in := "a:2:{i:0;O:4:\"Mail\":3:{s:2:\"to\";s:3:\"ada\";s:8:\"\x00*\x00tries\";i:3;s:11:\"\x00Mail\x00token\";N;}i:1;r:2;}"
	v, err := phpserial.Unmarshal([]byte(in))
	if err != nil {
		panic(err)
	}
	list := v.(*phpserial.Array)
	mail := list.Entries[0].Value.(*phpserial.Object)
	for _, p := range mail.Props {
		fmt.Printf("%s $%s = %v\n", p.Visibility, p.Name, p.Value)
	}
	again, _ := phpserial.Resolve(v, int(list.Entries[1].Value.(phpserial.Ref)))
	fmt.Println("entry 1 is the same", again.(*phpserial.Object).Class)
	out, _ := phpserial.Marshal(v)
	fmt.Println("round trip:", string(out) == in)
	// Output:
	// public $to = ada
	// protected $tries = 3
	// private $token = <nil>
	// entry 1 is the same Mail
	// round trip: true
}
