// Prints every event of a binary log file as go-mysql (the replication
// library of Vitess-adjacent tools, canal and gh-ost) decodes it, one fact
// per line, for canyon-binlog's tests (tests/go_mysql.rs).
package main

import (
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

func value(v interface{}) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case decimal.Decimal:
		return x.String()
	case string:
		return fmt.Sprintf("%q", x)
	case []byte:
		return fmt.Sprintf("%q", x)
	default:
		return fmt.Sprintf("%v", x)
	}
}

func main() {
	p := replication.NewBinlogParser()
	p.SetVerifyChecksum(true)
	p.SetUseDecimal(true)
	p.SetTimestampStringLocation(time.UTC)
	err := p.ParseFile(os.Args[1], 0, func(e *replication.BinlogEvent) error {
		h := e.Header
		fmt.Printf("event %s end=%d size=%d\n", h.EventType, h.LogPos, h.EventSize)
		switch ev := e.Event.(type) {
		case *replication.FormatDescriptionEvent:
			fmt.Printf("format version=%d server=%s checksum=%d\n", ev.Version, ev.ServerVersion, ev.ChecksumAlgorithm)
		case *replication.PreviousGTIDsEvent:
			fmt.Printf("previous %s\n", ev.GTIDSets)
		case *replication.GTIDEvent:
			sid, _ := uuid.FromBytes(ev.SID)
			fmt.Printf("gtid %s:%d flag=%d last_committed=%d sequence_number=%d commit_ts=%d original_ts=%d length=%d version=%d original_version=%d\n",
				sid, ev.GNO, ev.CommitFlag, ev.LastCommitted, ev.SequenceNumber, ev.ImmediateCommitTimestamp,
				ev.OriginalCommitTimestamp, ev.TransactionLength, ev.ImmediateServerVersion, ev.OriginalServerVersion)
		case *replication.QueryEvent:
			fmt.Printf("query schema=%s sql=%s\n", ev.Schema, ev.Query)
		case *replication.XIDEvent:
			fmt.Printf("xid %d\n", ev.XID)
		case *replication.RotateEvent:
			fmt.Printf("rotate %s %d\n", ev.NextLogName, ev.Position)
		case *replication.TableMapEvent:
			fmt.Printf("table %s.%s id=%d\n", ev.Schema, ev.Table, ev.TableID)
			names := ev.ColumnNameString()
			unsigned := ev.UnsignedMap()
			coll := ev.CollationMap()
			esColl := ev.EnumSetCollationMap()
			enums := ev.EnumStrValueMap()
			sets := ev.SetStrValueMap()
			for i, t := range ev.ColumnType {
				nullable := (ev.NullBitmap[i/8]>>(uint(i)%8))&1 == 1
				fmt.Printf("column %d %s type=%d meta=%d nullable=%v unsigned=%v collation=%d enum_set_collation=%d enum=%v set=%v\n",
					i, names[i], t, ev.ColumnMeta[i], nullable, unsigned[i], coll[i], esColl[i], enums[i], sets[i])
			}
			pk := append([]uint64(nil), ev.PrimaryKey...)
			sort.Slice(pk, func(a, b int) bool { return pk[a] < pk[b] })
			fmt.Printf("primary key %v\n", pk)
		case *replication.RowsEvent:
			fmt.Printf("rows table=%d flags=%d\n", ev.TableID, ev.Flags)
			for r, row := range ev.Rows {
				for c, v := range row {
					fmt.Printf("row %d col %d = %s\n", r, c, value(v))
				}
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
