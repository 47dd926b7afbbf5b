package tpch

import "strconv"

// Rows as text, for DuckDB's CSV reader: one line a row, its values
// separated by tabs, decimals with two places ("-12.05"), dates as
// 1995-03-15. No value needs quoting or escaping: the text pool and the
// random strings hold no tab, newline or quote (TestGeneratorDeterministic
// checks the pool).

// appendText appends n rows of t (rows holds them flat) as text lines.
func appendText(b []byte, t *table, rows []val, n int) []byte {
	nc := len(t.cols)
	for r := range n {
		row := rows[r*nc : (r+1)*nc]
		for i, c := range t.cols {
			if i > 0 {
				b = append(b, '\t')
			}
			v := row[i]
			switch c.kind {
			case kInt, kBig:
				b = strconv.AppendInt(b, v.i, 10)
			case kMoney:
				b = appendCents(b, v.i)
			case kDate:
				b = append(b, dateText[v.i]...)
			case kText:
				b = append(b, v.s...)
			}
		}
		b = append(b, '\n')
	}
	return b
}

// appendCents appends hundredths c as a decimal with two places: 6 is
// "0.06", -99999 "-999.99".
func appendCents(b []byte, c int64) []byte {
	if c < 0 {
		b = append(b, '-')
		c = -c
	}
	b = strconv.AppendInt(b, c/100, 10)
	return append(b, '.', byte('0'+c%100/10), byte('0'+c%10))
}
