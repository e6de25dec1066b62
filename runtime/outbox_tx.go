package runtime

import (
	"fmt"
	"reflect"
)

// checkTx refuses a nil transaction, typed or not: (*sql.Tx)(nil) is a
// Tx whose methods would panic. The error names the transaction's type.
func checkTx(tx Tx) error {
	if tx == nil {
		return fmt.Errorf("%w: the transaction is nil: pass the *sql.Tx from db.BeginTx (or pgxoutbox.Tx of a pgx.Tx)", ErrInvalid)
	}
	switch v := reflect.ValueOf(tx); v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		if v.IsNil() {
			return fmt.Errorf("%w: the transaction is a nil %T: pass the *sql.Tx from db.BeginTx (or pgxoutbox.Tx of a pgx.Tx)", ErrInvalid, tx)
		}
	}
	if n, ok := tx.(interface{ NilTx() error }); ok {
		if err := n.NilTx(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	return nil
}
