package exposition

// role says which part of its family a sample is, from its name's suffix.
type role uint8

const (
	roleValue role = iota // named exactly like the family
	roleBucket
	roleSum
	roleCount
	roleCreated
	roleTotal
	roleGSum
	roleGCount
	roleInfo
)

type typeMask uint16

func maskOf(ts ...Type) typeMask {
	var m typeMask
	for _, t := range ts {
		m |= 1 << t
	}
	return m
}

// suffixRule lets a sample named <family><suffix> join a family of one of the
// listed types. The text rules are exactly expfmt's; OpenMetrics adds the
// suffixes its spec defines.
type suffixRule struct {
	suffix   string
	role     role
	text, om typeMask
}

var suffixes = [...]suffixRule{
	{"_bucket", roleBucket, maskOf(TypeHistogram, TypeGaugeHistogram), maskOf(TypeHistogram, TypeGaugeHistogram)},
	{"_count", roleCount, maskOf(TypeSummary, TypeHistogram, TypeGaugeHistogram), maskOf(TypeSummary, TypeHistogram)},
	{"_sum", roleSum, maskOf(TypeSummary, TypeHistogram, TypeGaugeHistogram), maskOf(TypeSummary, TypeHistogram)},
	{"_total", roleTotal, 0, maskOf(TypeCounter)},
	{"_created", roleCreated, 0, maskOf(TypeCounter, TypeHistogram, TypeSummary)},
	{"_gcount", roleGCount, 0, maskOf(TypeGaugeHistogram)},
	{"_gsum", roleGSum, 0, maskOf(TypeGaugeHistogram)},
	{"_info", roleInfo, 0, maskOf(TypeInfo)},
}

func (r *suffixRule) allows(f Format, t Type) bool {
	m := r.text
	if f == FormatOpenMetrics {
		m = r.om
	}
	return m&(1<<t) != 0
}

// roleOf recovers a sample's role from its name and its family's name.
func roleOf(sample, family string) role {
	if len(sample) <= len(family) {
		return roleValue
	}
	sfx := sample[len(family):]
	for i := range suffixes {
		if suffixes[i].suffix == sfx {
			return suffixes[i].role
		}
	}
	return roleValue
}
