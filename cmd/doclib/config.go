package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/doclib/doclib/shared/settings"
)

// defaultURL is the local server's address (go run ./cmd/doclib-server).
const defaultURL = "http://127.0.0.1:8080"

// errNoKey is a configuration without an API key anywhere.
var errNoKey = errors.New("no API key")

// fileConfig is the config file: {"url": "...", "apiKey": "..."}.
type fileConfig struct {
	URL    string `json:"url"`
	APIKey string `json:"apiKey"`
}

// settings are the URL and key in use, and where each came from (for
// messages; the key itself is never printed).
type resolved struct {
	url, urlFrom string
	key, keyFrom string
}

// settings resolves the configuration: flags, then environment, then the
// config file, then the default URL.
func (a *app) settings() (*resolved, error) {
	if a.set != nil {
		return a.set, nil
	}
	file, path, err := a.readConfig()
	if err != nil {
		return nil, err
	}
	s := &resolved{url: defaultURL, urlFrom: "the default"}
	switch {
	case a.url != "":
		s.url, s.urlFrom = a.url, "--url"
	case a.getenv(settings.EnvURL) != "":
		s.url, s.urlFrom = a.getenv(settings.EnvURL), settings.EnvURL
	case file.URL != "":
		s.url, s.urlFrom = file.URL, "the config file "+path
	}
	switch {
	case a.keyFile != "":
		raw, err := os.ReadFile(a.keyFile)
		if err != nil {
			return nil, usageError{fmt.Errorf("--api-key-file: %w", err)}
		}
		s.key, s.keyFrom = strings.TrimSpace(string(raw)), "--api-key-file "+a.keyFile
		if s.key == "" {
			return nil, usageError{fmt.Errorf("--api-key-file %s is empty; put the API key in it (alone, on one line)", a.keyFile)}
		}
		a.checkPrivate(a.keyFile)
	case strings.TrimSpace(a.getenv(settings.EnvAPIKey)) != "":
		s.key, s.keyFrom = strings.TrimSpace(a.getenv(settings.EnvAPIKey)), settings.EnvAPIKey
	case strings.TrimSpace(file.APIKey) != "":
		s.key, s.keyFrom = strings.TrimSpace(file.APIKey), "the config file "+path
	default:
		where := path
		if where == "" {
			where = "doclib/config.json in your user config directory"
		}
		return nil, usageError{fmt.Errorf(`%w. Set one in any of these ways:
  export %s=YOUR_KEY
  doclib --api-key-file FILE ...        (a file holding only the key)
  {"apiKey": "YOUR_KEY"} in %s (chmod 600)
The local server (go run ./cmd/doclib-server) prints demo keys when it starts`, errNoKey, settings.EnvAPIKey, where)}
	}
	a.set = s
	return s, nil
}

// readConfig reads --config, or the default config file when it exists. A
// missing default file is no configuration; a missing --config is an error.
func (a *app) readConfig() (fileConfig, string, error) {
	var cfg fileConfig
	path, explicit := a.configFile, a.configFile != ""
	if !explicit {
		dir, err := a.userConfigDir()
		if err != nil {
			return cfg, "", nil // no home directory: no default file
		}
		path = filepath.Join(dir, "doclib", "config.json")
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return cfg, path, nil
	}
	if err != nil {
		return cfg, path, usageError{fmt.Errorf("config file: %w", err)}
	}
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")) // a byte order mark, as some Windows editors write
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(&cfg)
	switch {
	case err == nil && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")):
		err = errors.New("not a JSON object")
	case err == nil && dec.More():
		err = errors.New("more after the JSON object")
	case err == nil:
		if _, tokErr := dec.Token(); tokErr != io.EOF {
			err = errors.New("more after the JSON object")
		}
	}
	if err != nil {
		// encoding/json's messages name a field or a character, never a value.
		return cfg, path, usageError{fmt.Errorf(`config file %s: %v; it must be a JSON object such as {"url": "https://api.example.com", "apiKey": "YOUR_KEY"}`, path, err)}
	}
	if cfg.APIKey != "" {
		a.checkPrivate(path)
	}
	return cfg, path, nil
}

// checkPrivate warns when a file holding a key can be read by other users.
func (a *app) checkPrivate(path string) {
	if runtime.GOOS == "windows" {
		return // permission bits do not describe Windows ACLs
	}
	fi, err := os.Stat(path)
	if err == nil && fi.Mode().Perm()&0o044 != 0 {
		fmt.Fprintf(a.stderr, "doclib: warning: %s holds an API key and other users can read it (mode %04o); run: chmod 600 %s\n",
			path, fi.Mode().Perm(), path)
	}
}
