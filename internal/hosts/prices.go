package hosts

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/numalab/numalab/internal/model"
)

// Price is what a host costs over the comparison: a purchase price, or
// an hourly rate over a number of hours (a cloud instance type), and the
// licence per physical core of the software it will run.
type Price struct {
	Name           string  `json:"name" toml:"name"`
	Price          float64 `json:"price,omitempty" toml:"price"`
	Hourly         float64 `json:"hourly,omitempty" toml:"hourly"`
	Hours          float64 `json:"hours,omitempty" toml:"hours"`
	LicencePerCore float64 `json:"licence_per_core" toml:"licence_per_core"`
	Note           string  `json:"note,omitempty" toml:"note"`
}

// Amount is the host's own cost over the comparison: Price, or Hourly ×
// Hours.
func (p Price) Amount() float64 {
	if p.Hourly > 0 {
		return p.Hourly * p.Hours
	}
	return p.Price
}

// String says where Amount comes from.
func (p Price) String() string {
	if p.Hourly > 0 {
		return fmt.Sprintf("%s per hour × %s hours", model.Num(p.Hourly), model.Num(p.Hours))
	}
	return "purchase price " + model.Thousands(p.Price)
}

// pricesFile is a prices file: one [[host]] table per host, and a
// licence per core for every host that does not give its own.
type pricesFile struct {
	LicencePerCore *float64    `toml:"licence_per_core"`
	Host           []hostPrice `toml:"host"`
}

// hostPrice is a [[host]] table as written: its licence, when not given,
// is the file's.
type hostPrice struct {
	Price
	LicencePerCore *float64 `toml:"licence_per_core"`
}

// ParsePrices reads a prices file (TOML; see docs/choosing.md):
//
//	licence_per_core = 0          # every host's, unless it gives its own
//	[[host]]
//	name = "db-a"                 # the host name its runs were stored under
//	price = 14000                 # a purchase price, or:
//	[[host]]
//	name = "m7i.2xlarge"
//	hourly = 0.4032               # per hour,
//	hours = 8760                  # over this many hours
//
// Every problem is reported together, naming the file and the host.
func ParsePrices(name string, data []byte) ([]Price, error) {
	var f pricesFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil,
			fmt.Errorf("%s: %v (want one [[host]] table per host with name and price, or hourly and hours)", name, err)
	}
	var errs []error
	for _, k := range md.Undecoded() {
		errs = append(errs, fmt.Errorf("%s: unknown key %q (want licence_per_core, and [[host]] tables with name, "+
			"price, hourly, hours, licence_per_core, note)", name, k.String()))
	}
	if len(f.Host) == 0 && len(errs) == 0 {
		errs = append(errs,
			fmt.Errorf("%s: no [[host]] table: want one per host, with name and price, or hourly and hours", name))
	}
	seen := map[string]bool{}
	var out []Price
	for i, hp := range f.Host {
		p := hp.Price
		switch {
		case hp.LicencePerCore != nil:
			p.LicencePerCore = *hp.LicencePerCore
		case f.LicencePerCore != nil:
			p.LicencePerCore = *f.LicencePerCore
		}
		out = append(out, p)
		for _, e := range p.check() {
			errs = append(errs, fmt.Errorf("%s: host %d (%q): %s", name, i+1, p.Name, e))
		}
		if seen[p.Name] && p.Name != "" {
			errs = append(errs, fmt.Errorf("%s: host %q is given twice: want one [[host]] table per host", name, p.Name))
		}
		seen[p.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// check says what is wrong with p.
func (p Price) check() []string {
	var out []string
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if strings.TrimSpace(p.Name) == "" {
		out = append(out, "name is missing: want the host name its runs were stored under ('numalab runs' shows it)")
	}
	switch {
	case p.Price != 0 && (p.Hourly != 0 || p.Hours != 0):
		out = append(out, "price and hourly are both given: give a purchase price, or hourly and hours")
	case p.Hourly != 0 || p.Hours != 0:
		if !(p.Hourly > 0 && finite(p.Hourly)) {
			out = append(out, fmt.Sprintf("hourly = %s: want the price per hour, above 0", model.Num(p.Hourly)))
		}
		if !(p.Hours > 0 && finite(p.Hours)) {
			out = append(out, fmt.Sprintf("hours = %s: want the hours to compare over, above 0 (a year is 8760)",
				model.Num(p.Hours)))
		}
	case !(p.Price > 0 && finite(p.Price)):
		out = append(out, fmt.Sprintf("price = %s: want a purchase price above 0, or hourly and hours", model.Num(p.Price)))
	}
	if !(p.LicencePerCore >= 0 && finite(p.LicencePerCore)) {
		out = append(out, fmt.Sprintf("licence_per_core = %s: want 0 (no per-core licence) or more",
			model.Num(p.LicencePerCore)))
	}
	return out
}
