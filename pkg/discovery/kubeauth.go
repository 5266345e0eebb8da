package discovery

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// serviceAccountDir is where Kubernetes mounts a pod's service account token and CA; a variable for tests.
var serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// kubeClient talks to one API server: its URL, an HTTP client trusting its CA (with a client certificate when the
// kubeconfig names one) and a bearer token, read again at every request when it comes from a file because service
// account tokens rotate.
type kubeClient struct {
	server    string
	client    *http.Client
	token     string
	tokenFile string

	mu      sync.Mutex
	tokenAt time.Time
	fileTok string
}

// maxKubeconfigBytes bounds a kubeconfig file and a token file.
const maxKubeconfigBytes = 1 << 20

// newKubeClient builds the client from a kubeconfig path, or from the in-cluster service account when path is
// empty; apiServer, when set, replaces the server URL. configure applies the data source's egress rules.
func newKubeClient(path, apiServer string, configure func(*http.Transport)) (*kubeClient, error) {
	kc := &kubeClient{}
	tlsc := &tls.Config{MinVersion: tls.VersionTLS12}
	if path == "" {
		host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
		if (host == "" || port == "") && apiServer == "" {
			return nil, errors.New("not running in a Kubernetes pod (KUBERNETES_SERVICE_HOST is not set): give a kubeconfig path")
		}
		kc.server = "https://" + net.JoinHostPort(host, port)
		kc.tokenFile = filepath.Join(serviceAccountDir, "token")
		ca, err := readBounded(filepath.Join(serviceAccountDir, "ca.crt"))
		if err != nil {
			return nil, fmt.Errorf("service account CA: %w", err)
		}
		if tlsc.RootCAs, err = certPool(ca); err != nil {
			return nil, err
		}
	} else if err := kc.fromKubeconfig(path, tlsc); err != nil {
		return nil, err
	}
	if apiServer != "" {
		kc.server = apiServer
	}
	kc.server = strings.TrimSuffix(kc.server, "/")
	t := &http.Transport{TLSClientConfig: tlsc, Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 4,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second, ResponseHeaderTimeout: 30 * time.Second}
	if configure != nil {
		configure(t)
	}
	kc.client = &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return kc, nil
}

// kubeconfig is the part of a kubeconfig file this client reads.
type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Contexts       []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
	Clusters []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Token                 string         `yaml:"token"`
			TokenFile             string         `yaml:"tokenFile"`
			ClientCertificate     string         `yaml:"client-certificate"`
			ClientCertificateData string         `yaml:"client-certificate-data"`
			ClientKey             string         `yaml:"client-key"`
			ClientKeyData         string         `yaml:"client-key-data"`
			Exec                  map[string]any `yaml:"exec"`
			AuthProvider          map[string]any `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
}

// fromKubeconfig reads the current context's cluster and user: token, token file or client certificate. Exec
// plugins and auth providers (cloud CLIs) are refused: the plugin runs no programs.
func (kc *kubeClient) fromKubeconfig(path string, tlsc *tls.Config) error {
	b, err := readBounded(path)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	var cfg kubeconfig
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("kubeconfig %s is not a kubeconfig: %w", path, err)
	}
	var clusterName, userName string
	for _, c := range cfg.Contexts {
		if c.Name == cfg.CurrentContext {
			clusterName, userName = c.Context.Cluster, c.Context.User
		}
	}
	if clusterName == "" {
		return fmt.Errorf("kubeconfig %s: current-context %.64q names no context", path, cfg.CurrentContext)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	found := false
	for _, c := range cfg.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		kc.server = c.Cluster.Server
		if c.Cluster.InsecureSkipTLSVerify {
			// The token or client key would go to whoever answers: give the cluster's CA instead.
			return fmt.Errorf("kubeconfig cluster %s sets insecure-skip-tls-verify: credentials are only sent to a verified API server; set certificate-authority(-data)", clusterName)
		}
		ca, err := dataOrFile(c.Cluster.CertificateAuthorityData, rel(c.Cluster.CertificateAuthority))
		if err != nil {
			return fmt.Errorf("kubeconfig cluster %s CA: %w", clusterName, err)
		}
		if ca != nil {
			if tlsc.RootCAs, err = certPool(ca); err != nil {
				return err
			}
		}
	}
	if !found || checkHTTPURL(kc.server) != nil {
		return fmt.Errorf("kubeconfig %s: cluster %.64q has no http(s) server URL", path, clusterName)
	}
	for _, u := range cfg.Users {
		if u.Name != userName {
			continue
		}
		if u.User.Exec != nil || u.User.AuthProvider != nil {
			return fmt.Errorf("kubeconfig user %.64q authenticates through a program (exec/auth-provider), which the plugin does not run: use a service account token", userName)
		}
		kc.token, kc.tokenFile = u.User.Token, rel(u.User.TokenFile)
		cert, err := dataOrFile(u.User.ClientCertificateData, rel(u.User.ClientCertificate))
		if err != nil {
			return fmt.Errorf("kubeconfig user %s certificate: %w", userName, err)
		}
		key, err := dataOrFile(u.User.ClientKeyData, rel(u.User.ClientKey))
		if err != nil {
			return fmt.Errorf("kubeconfig user %s key: %w", userName, err)
		}
		if cert != nil || key != nil {
			pair, err := tls.X509KeyPair(cert, key)
			if err != nil {
				return fmt.Errorf("kubeconfig user %s: client certificate and key do not load", userName)
			}
			tlsc.Certificates = []tls.Certificate{pair}
		}
	}
	return nil
}

// dataOrFile is base64 data when given, else the file's content, else nil.
func dataOrFile(data, file string) ([]byte, error) {
	if data != "" {
		return base64.StdEncoding.DecodeString(data)
	}
	if file != "" {
		return readBounded(file)
	}
	return nil, nil
}

func certPool(pem []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("the CA holds no PEM certificate")
	}
	return pool, nil
}

// readBounded reads a small file, refusing one over maxKubeconfigBytes.
func readBounded(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Size() > maxKubeconfigBytes {
		return nil, fmt.Errorf("%s is over %d bytes", path, maxKubeconfigBytes)
	}
	return os.ReadFile(path)
}

// tokenTTL is how long a token read from a file serves before it is read again (kubelet rotates them hourly).
const tokenTTL = time.Minute

// authorize sets the bearer token on a request.
func (kc *kubeClient) authorize(req *http.Request) error {
	tok := kc.token
	if kc.tokenFile != "" {
		kc.mu.Lock()
		if time.Since(kc.tokenAt) > tokenTTL {
			b, err := readBounded(kc.tokenFile)
			if err != nil {
				kc.mu.Unlock()
				return fmt.Errorf("service account token: %w", err)
			}
			kc.fileTok, kc.tokenAt = strings.TrimSpace(string(b)), time.Now()
		}
		tok = kc.fileTok
		kc.mu.Unlock()
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return nil
}
