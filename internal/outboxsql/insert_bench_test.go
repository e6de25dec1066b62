package outboxsql

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	_ "github.com/lib/pq"
)

// BenchmarkInsertForms compares, on database/sql (lib/pq), the INSERT
// that Insert writes (one multi-row VALUES list of 9 parameters a row,
// in chunks of InsertRows) with chunks of other sizes, and with one
// INSERT ... SELECT FROM unnest of 9 text arrays, the portable form
// without a parameter a value. Run it against JOBGEN_TEST_POSTGRES_URL:
//
//	go test -run - -bench InsertForms ./internal/outboxsql
func arrText(vals []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func insertUnnest(ctx context.Context, tx Execer, table string, rows []Row) error {
	cols := make([][]string, 9)
	for _, r := range rows {
		vals := []string{r.ID, r.Kind, r.Connection, r.Queue, r.Name, strconv.FormatInt(r.DelayMS, 10), r.UniqueKey, strconv.FormatInt(r.UniqueForMS, 10), base64.StdEncoding.EncodeToString(r.Payload)}
		for c := range vals {
			cols[c] = append(cols[c], vals[c])
		}
	}
	args := make([]any, 9)
	for c := range cols {
		args[c] = arrText(cols[c])
	}
	q := "INSERT INTO " + table + " (" + columns + ") SELECT i, k, c, q, n, d, u, uf, decode(p, 'base64') FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::bigint[], $9::text[]) AS x(i, k, c, q, n, d, u, uf, p)"
	_, err := tx.ExecContext(ctx, q, args...)
	return err
}

func BenchmarkInsertForms(b *testing.B) {
	url := os.Getenv("JOBGEN_TEST_POSTGRES_URL")
	if url == "" {
		b.Skip()
	}
	db, err := sql.Open("postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	table := "bench_forms"
	if _, err := Migrate(ctx, db, table, 0, true); err != nil {
		b.Fatal(err)
	}
	if _, err := Migrate(ctx, db, table, Need, false); err != nil {
		b.Fatal(err)
	}
	defer func() { _, _ = Migrate(ctx, db, table, 0, true) }()
	for _, n := range []int{10, 100, 1000} {
		rows := make([]Row, n)
		for i := range rows {
			rows[i] = Row{ID: fmt.Sprintf("01J%023d", i), Kind: KindJob, Queue: "default", Name: "bench.Job", Payload: make([]byte, 150)}
		}
		for _, form := range []string{"values", "values100", "values250", "unnest"} {
			b.Run(fmt.Sprintf("%s/%d", form, n), func(b *testing.B) {
				for b.Loop() {
					tx, err := db.BeginTx(ctx, nil)
					if err != nil {
						b.Fatal(err)
					}
					switch form {
					case "values":
						_, err = Insert(ctx, tx, table, rows)
					case "values100", "values250":
						size, _ := strconv.Atoi(form[len("values"):])
						for s := 0; s < len(rows) && err == nil; s += size {
							_, err = insert(ctx, tx, table, rows[s:min(s+size, len(rows))], "")
						}
					default:
						err = insertUnnest(ctx, tx, table, rows)
					}
					if err != nil {
						b.Fatal(err)
					}
					if err := tx.Commit(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
