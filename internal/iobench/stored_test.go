package iobench

import (
	"encoding/json"
	"testing"
)

// TestStoredConfig: the stored configuration keeps the JSON names that
// stores written before it hold.
func TestStoredConfig(t *testing.T) {
	b, err := json.Marshal(QuickConfig("/data").Stored(true))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"dir":"/data","size":0,"duration":"1s","quick":true,"depths":[1,4,16,64],"seq_sizes":[65536,262144,1048576],"seq_qd":1,"mix_qd":16,"mix_read_pct":70,"buffered":false,"seed":1}`
	if string(b) != want {
		t.Errorf("stored config\n got %s\nwant %s", b, want)
	}
}
