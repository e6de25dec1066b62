package laravel_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/internal/phptest"
	"github.com/jobgen/jobgen/laravel"
)

// sendReceipt is the Go side of App\Jobs\SendReceipt: its fields map to
// the class's properties $email and $amount.
type sendReceipt struct {
	Email  string
	Amount int
}

// serialized returns PHP's serialize() of a new App\Jobs\SendReceipt
// declared with props (PHP property declarations).
func serialized(t *testing.T, props string) string {
	t.Helper()
	code := `namespace App\Jobs; class SendReceipt { ` + props + ` } echo serialize(new SendReceipt);`
	out, err := exec.Command(phptest.Bin(t), "-r", code).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return string(out)
}

// What the bridge does with a job whose PHP class changed while jobs of
// it were queued (docs/changing-jobs.md): it maps properties to fields
// by name. A property the Go struct does not map is ignored, as
// Queueable's own are. A mapped property the payload lacks (the class
// renamed or removed it) is refused, naming it, unless the field is
// tagged optional. A property whose value no longer fits its field is
// refused, naming the property.
func TestLaravelClassPropertiesChanged(t *testing.T) {
	const class = `App\Jobs\SendReceipt`
	// The class as the Go struct knows it.
	job, err := laravel.DecodeCommand[sendReceipt](serialized(t, `public $email = "a@example.com"; public $amount = 5;`), class)
	require.NoError(t, err)
	require.Equal(t, sendReceipt{Email: "a@example.com", Amount: 5}, job)

	// A property added in PHP: ignored.
	job, err = laravel.DecodeCommand[sendReceipt](serialized(t, `public $email = "a@example.com"; public $amount = 5; public $currency = "EUR";`), class)
	require.NoError(t, err)
	require.Equal(t, sendReceipt{Email: "a@example.com", Amount: 5}, job)

	// A property renamed in PHP ($email to $recipient): refused, naming
	// the property and the field, where it ran with the field zero.
	_, err = laravel.DecodeCommand[sendReceipt](serialized(t, `public $recipient = "a@example.com"; public $amount = 5;`), class)
	require.ErrorIs(t, err, laravel.ErrUnmappable)
	require.ErrorContains(t, err, "property $email, which field laravel_test.sendReceipt.Email maps, is missing")
	require.ErrorContains(t, err, "$recipient, $amount")
	t.Logf("a renamed property: %v", err)

	// A Go field tagged with the name the queued payloads carry reads it.
	type renamed struct {
		Recipient string `php:"email"`
		Amount    int
	}
	moved, err := laravel.DecodeCommand[renamed](serialized(t, `public $email = "a@example.com"; public $amount = 5;`), class)
	require.NoError(t, err)
	require.Equal(t, renamed{Recipient: "a@example.com", Amount: 5}, moved)

	// An uninitialized typed property, which serialize() leaves out,
	// fits a field tagged optional, which stays zero.
	type optional struct {
		Email  string `php:"email,optional"`
		Amount int
	}
	opt, err := laravel.DecodeCommand[optional](serialized(t, `public string $email; public $amount = 5;`), class)
	require.NoError(t, err)
	require.Equal(t, optional{Amount: 5}, opt)
	_, err = laravel.DecodeCommand[sendReceipt](serialized(t, `public string $email; public $amount = 5;`), class)
	require.ErrorContains(t, err, "property $email")

	// A property whose type changed: refused, naming it.
	_, err = laravel.DecodeCommand[sendReceipt](serialized(t, `public $email = "a@example.com"; public $amount = "five";`), class)
	require.ErrorIs(t, err, laravel.ErrUnmappable)
	require.ErrorContains(t, err, "$amount")
	t.Logf("a changed type: %v", err)
}
