package model

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseCPUOption reads a processor option 'cores=N,price=P[,ghz=F][,name=TEXT]'.
// Without a name, one with a clock is named by DefaultName.
func ParseCPUOption(s string) (CPUOption, error) {
	var c CPUOption
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		var err error
		switch k = strings.TrimSpace(k); {
		case !ok:
			err = fmt.Errorf("%q is not key=value", kv)
		case k == "cores":
			c.Cores, err = strconv.Atoi(v)
			if err == nil && c.Cores < 1 {
				err = fmt.Errorf("cores=%s: want 1 or more", v)
			}
		case k == "price":
			c.Price, err = strconv.ParseFloat(v, 64)
			if err == nil && (c.Price < 0 || math.IsInf(c.Price, 0)) {
				err = fmt.Errorf("price=%s: want 0 or more", v)
			}
		case k == "ghz":
			c.GHz, err = strconv.ParseFloat(v, 64)
			if err == nil && !(c.GHz > 0) {
				err = fmt.Errorf("ghz=%s: want a clock above 0", v)
			}
		case k == "name":
			c.Name = v
		default:
			err = fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return c, fmt.Errorf("%v (want cores=N,price=P[,ghz=F][,name=TEXT], e.g. 'cores=16,ghz=3,price=3000')", err)
		}
		seen[k] = true
	}
	if !seen["cores"] || !seen["price"] {
		return c, errors.New("needs cores= and price= (want cores=N,price=P[,ghz=F][,name=TEXT], e.g. 'cores=16,ghz=3,price=3000')")
	}
	if c.Name == "" && c.GHz > 0 {
		c.Name = c.DefaultName()
	}
	return c, nil
}

// DefaultName names a processor option by its cores and clock: "16c 3GHz".
func (c CPUOption) DefaultName() string {
	return fmt.Sprintf("%dc %sGHz", c.Cores, Num(c.GHz))
}

// ParseSystemPrices reads base system prices by socket count, 'S:PRICE,...'
// (e.g. 1:4000,2:9000); "" is none.
func ParseSystemPrices(s string) (map[int]float64, error) {
	m := map[int]float64{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
		n, err1 := strconv.Atoi(k)
		p, err2 := strconv.ParseFloat(v, 64)
		if !ok || err1 != nil || err2 != nil || n < 1 || p < 0 || math.IsInf(p, 0) {
			return nil, fmt.Errorf("%q is not a list of SOCKETS:PRICE: want e.g. 1:4000,2:9000,4:40000", s)
		}
		m[n] = p
	}
	return m, nil
}
