package laravel_test

import (
	"fmt"
	"time"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/laravel/phpserial"
)

// Welcome stands for App\Jobs\Welcome: public $userId, protected $email.
type Welcome struct {
	UserID int    `php:"userId"`
	Email  string `php:"email,protected"`
}

func ExampleDecodeCommand() {
	// data.command of a payload Laravel pushed for new Welcome(7, 'ada@example.com').
	cmd := "O:16:\"App\\Jobs\\Welcome\":3:{s:6:\"userId\";i:7;s:8:\"\x00*\x00email\";s:15:\"ada@example.com\";s:7:\"chained\";a:0:{}}"
	job, err := laravel.DecodeCommand[Welcome](cmd, `App\Jobs\Welcome`)
	fmt.Printf("%+v %v\n", job, err)
	// Output: {UserID:7 Email:ada@example.com} <nil>
}

func ExampleEncodeCommand() {
	cmd, err := laravel.EncodeCommand(Welcome{UserID: 7, Email: "ada@example.com"}, `App\Jobs\Welcome`, "emails", 90*time.Second)
	if err != nil {
		panic(err)
	}
	v, _ := phpserial.Unmarshal(cmd)
	o := v.(*phpserial.Object)
	fmt.Println(o.Class)
	for _, p := range o.Props {
		if p.Value != nil {
			fmt.Printf("  %s $%s = %v\n", p.Visibility, p.Name, p.Value)
		}
	}
	// Output:
	// App\Jobs\Welcome
	//   public $userId = 7
	//   protected $email = ada@example.com
	//   public $queue = emails
	//   public $delay = 90
	//   public $middleware = &{[]}
	//   public $chained = &{[]}
}
