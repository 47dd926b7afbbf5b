package sysfs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fakeProc lays out, under a temporary root, the /proc files of a
// postmaster (pid 100) with two children, a parallel worker (101) and
// the checkpointer (102), and of a mariadbd (200) with three threads.
func fakeProc(t *testing.T) FS {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"proc/100/comm":                       "postgres\n",
		"proc/100/cmdline":                    "postgres\x00-D\x00/tmp/pg\x00",
		"proc/100/task/100/children":          "101 102 ",
		"proc/101/comm":                       "postgres\n",
		"proc/101/cmdline":                    "postgres: parallel worker for PID 105   ",
		"proc/200/comm":                       "mariadbd\n",
		"proc/200/task/200/comm":              "mariadbd\n",
		"proc/200/task/201/comm":              "ib_pg_flush_co\n",
		"proc/200/task/1000/comm":             "one_connection\n",
		"proc/sys/kernel/perf_event_paranoid": "2\n",
	}
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "proc/200/task/self-not-a-tid"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/sbin/mariadbd", filepath.Join(root, "proc/200/exe")); err != nil {
		t.Fatal(err)
	}
	return New(root)
}

func TestProcessFiles(t *testing.T) {
	f := fakeProc(t)
	if got, err := f.Comm(100); err != nil || got != "postgres" {
		t.Errorf("Comm(100) = %q, %v; want postgres", got, err)
	}
	if got, err := f.ThreadComm(200, 201); err != nil || got != "ib_pg_flush_co" {
		t.Errorf("ThreadComm(200, 201) = %q, %v; want ib_pg_flush_co", got, err)
	}
	if got, err := f.Cmdline(100); err != nil || got != "postgres\x00-D\x00/tmp/pg\x00" {
		t.Errorf("Cmdline(100) = %q, %v", got, err)
	}
	if got, err := f.Exe(200); err != nil || got != "/usr/sbin/mariadbd" {
		t.Errorf("Exe(200) = %q, %v; want /usr/sbin/mariadbd", got, err)
	}
	if got, err := f.Threads(200); err != nil || !slices.Equal(got, []int{200, 201, 1000}) {
		t.Errorf("Threads(200) = %v, %v; want [200 201 1000] (numeric order, no other entries)", got, err)
	}
	if got, err := f.Children(100); err != nil || !slices.Equal(got, []int{101, 102}) {
		t.Errorf("Children(100) = %v, %v; want [101 102]", got, err)
	}
	if got, err := f.Children(101); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Children(101) = %v, %v; want a missing file", got, err)
	}
	if got, err := f.String("proc/sys/kernel/perf_event_paranoid"); err != nil || got != "2" {
		t.Errorf("perf_event_paranoid = %q, %v; want 2", got, err)
	}
}

// A process that does not exist, or has ended, is a missing file for
// every reader, so that callers can tell it from a bad file.
func TestProcessGone(t *testing.T) {
	f := fakeProc(t)
	errs := map[string]error{}
	_, errs["Comm"] = f.Comm(7)
	_, errs["ThreadComm"] = f.ThreadComm(200, 7)
	_, errs["Cmdline"] = f.Cmdline(7)
	_, errs["Exe"] = f.Exe(7)
	_, errs["Threads"] = f.Threads(7)
	_, errs["Children"] = f.Children(7)
	for name, err := range errs {
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s of a process that is not there: %v, want an error satisfying fs.ErrNotExist", name, err)
		}
	}
}

func TestParsePIDs(t *testing.T) {
	tests := []struct {
		text    string
		want    []int
		wantErr bool
	}{
		{text: "", want: nil},
		{text: "4711 4712 ", want: []int{4711, 4712}},
		{text: "4711\n", want: []int{4711}},
		{text: "4711 x", wantErr: true},
		{text: "-1", wantErr: true},
		{text: "0", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParsePIDs([]byte(tt.text))
		if tt.wantErr {
			if !errors.Is(err, ErrFormat) {
				t.Errorf("ParsePIDs(%q) = %v, %v; want an error wrapping ErrFormat", tt.text, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("ParsePIDs(%q) = %v, %v; want %v", tt.text, got, err, tt.want)
		}
	}
}
