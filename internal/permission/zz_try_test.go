package permission

import (
	"bufio"
	"os"
	"testing"
)

func TestZZTry(t *testing.T) {
	fh, _ := os.Open(os.Getenv("CASES"))
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		d := (&Policy{}).WithMode(ModeDefault).Decide(commandRequest(sc.Text()))
		t.Logf("%-5s %s   [%s]", d.Action, sc.Text(), d.Reason)
	}
}
