package report

import "github.com/numalab/numalab/internal/published"

// publishedCheck is the model checked against the public audited results
// of internal/published (what 'numalab model validate' prints), at the
// stall share of md's workload; nil when md has no workload.
func publishedCheck(md *Model) (*published.Validation, error) {
	if md == nil || len(md.Table.Rows) == 0 || !(md.StallShare > 0 && md.StallShare < 1) {
		return nil, nil
	}
	res, err := published.BuiltinResults()
	if err != nil {
		return nil, err
	}
	return published.ValidateAt(res, md.StallShare)
}

// publishedLine is the model section's sentence on v.
func publishedLine(v *published.Validation) string {
	return v.Summary() + " The stall share is this workload's; 'numalab model validate' shows each pair " +
		"at the published share, with its sources."
}
