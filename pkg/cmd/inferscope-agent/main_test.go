package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagsRefuseAnUnsafeStart checks that the agent will not start without a place to listen, a token, or TLS
// (short of saying -insecure-plaintext), and takes the token from its file.
func TestFlagsRefuseAnUnsafeStart(t *testing.T) {
	t.Setenv(TokenEnv, "")
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("  from-the-file-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-tls-cert=c", "-tls-key=k"}, "-listen is required"},
		{[]string{"-listen=127.0.0.1:0"}, "-tls-cert and -tls-key are required"},
		{[]string{"-listen=127.0.0.1:0", "-insecure-plaintext", "-client-ca=ca.pem"}, "-client-ca needs TLS"},
		{[]string{"-listen=127.0.0.1:0", "-insecure-plaintext", "-max-profile-seconds=601"}, "-max-profile-seconds"},
		{[]string{"-listen=127.0.0.1:0", "-insecure-plaintext", "-token-file=" + tokenFile + ".missing"}, "reading -token-file"},
	}
	for _, c := range cases {
		if _, err := parse(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	o, err := parse([]string{"-listen=127.0.0.1:0", "-insecure-plaintext", "-token-file=" + tokenFile})
	if err != nil || o.cfg.Token != "from-the-file-0123456789" {
		t.Errorf("token from the file: %q %v", o.cfg.Token, err)
	}
	// Without any token the flags parse, and the agent itself refuses (pkg/agent.New).
	if err := run([]string{"-listen=127.0.0.1:0", "-insecure-plaintext"}, os.Stderr); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("started without a token: %v", err)
	}
}
