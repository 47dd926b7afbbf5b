package result

import "regexp"

var (
	urlPassword = regexp.MustCompile(`(://[^:/@\s]*:)[^@\s]*@`)
	kvPassword  = regexp.MustCompile(`(?i)(password\s*=\s*)('[^']*'|[^\s&]*)`)
)

// Redact hides passwords in DSNs and command lines
// ("postgres://u:secret@h/db", "password=secret") so they never reach a
// log, the store or a report.
func Redact(s string) string {
	s = urlPassword.ReplaceAllString(s, "${1}xxxxx@")
	return kvPassword.ReplaceAllString(s, "${1}xxxxx")
}
