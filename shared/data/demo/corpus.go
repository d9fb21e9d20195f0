package demo

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/doclib/doclib/shared/data/dataset"
)

// corpusJSON is the text the generator draws from: the fixed workspaces, devices,
// keys and libraries, and the procedures documents are written from. It is data
// rather than Go so that the prose can be edited and reviewed as prose; changing
// it changes demo.json, so run `go generate` after editing it.
//
//go:embed corpus.json
var corpusJSON []byte

// corpusFile is the shape of corpus.json.
type corpusFile struct {
	Workspaces []dataset.Workspace `json:"workspaces"`
	Devices    []dataset.Device    `json:"devices"`
	Keys       []keySpec           `json:"apiKeys"`
	Libraries  []libSpec           `json:"libraries"`
}

// The corpus is parsed once, when the package is initialised; a mistake in it
// panics, so it fails every test rather than producing a data set the validator
// refuses.
var (
	corpus         = mustParseCorpus(corpusJSON)
	workspaceSpecs = corpus.Workspaces
	deviceSpecs    = corpus.Devices
	keySpecs       = corpus.Keys // Keys (demo.go) is derived from it
	libSpecs       = corpus.Libraries
)

// keySpec is one demo key: its Key, for Keys, and the rest of its dataset.APIKey.
type keySpec struct {
	Name             string   `json:"name"`
	Description      string   `json:"description"`
	ID               string   `json:"id"`
	Secret           string   `json:"secret"`
	WorkspaceID      string   `json:"workspaceId"`
	DeviceID         string   `json:"deviceId"`
	Libraries        []string `json:"libraries"`
	RecordingDetails bool     `json:"recordingDetails,omitempty"`
	ExpiresAt        string   `json:"expiresAt,omitempty"`
}

// libSpec is one library and the procedures its documents are written from.
type libSpec struct {
	ID            string   `json:"id"`
	Workspace     string   `json:"workspaceId"`
	Name          string   `json:"name"`
	Slug          string   `json:"slug"`
	PreviousSlugs []string `json:"previousSlugs,omitempty"`
	Description   string   `json:"description"`
	Version       int      `json:"templateVersion"` // a key of schemas
	DemoDocuments int      `json:"demoDocuments"`   // documents in the demo set
	LargeWeight   int      `json:"largeWeight"`     // share of documents, in percent, above the demo size
	// Sites name the offices, entities or territories that vary titles once a
	// procedure's variants are used up; SiteSentence adds one to the summary.
	Sites        []string `json:"sites"`
	SiteSentence string   `json:"siteSentence"`
	QA           []qa     `json:"questions"` // questions that fit any procedure of the library
	Procs        []proc   `json:"procedures"`
}

// proc is one base procedure. Its documents are its variants.
type proc struct {
	Key      string   `json:"key"`
	Title    string   `json:"title"`
	Category string   `json:"category"`
	Tags     []string `json:"tags"`
	Apps     []string `json:"applications"`
	Summary  string   `json:"summary"`
	// Before and Fixes are used by version 2 templates.
	Before   []string  `json:"prerequisites,omitempty"`
	Steps    []string  `json:"steps"`
	Fixes    []string  `json:"troubleshooting,omitempty"`
	QA       []qa      `json:"questions"`
	Trail    []string  `json:"trail"` // a recording's step timeline
	Variants []variant `json:"variants,omitempty"`
	// Next lists the procedures often done next: "key" in the same library,
	// "lib_x:key" in another library of the same workspace.
	Next []string `json:"next,omitempty"`

	// Built by complete.
	stepsAny            [][]any // per variant
	beforeAny, fixesAny []any
	nextLocal           []int
	nextRemote          [][2]int // library, procedure
}

// variant is one scenario of a procedure: a title suffix, a sentence for the
// summary, an extra step (before the last one), application and tag. The plain
// procedure is always the first variant; complete adds it.
type variant struct {
	Label string `json:"label"`
	Note  string `json:"note,omitempty"`
	Step  string `json:"step,omitempty"`
	App   string `json:"application,omitempty"`
	Tag   string `json:"tag,omitempty"`
}

type qa struct {
	Q string `json:"question"`
	A string `json:"answer"`
}

func mustParseCorpus(b []byte) *corpusFile {
	c, err := parseCorpus(b)
	if err != nil {
		panic("demo: corpus.json: " + err.Error())
	}
	return c
}

// parseCorpus decodes the corpus strictly, so that a misspelt field is an error
// rather than a silently empty one, and completes it.
func parseCorpus(b []byte) (*corpusFile, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c corpusFile
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if dec.More() {
		return nil, errors.New("data after the corpus object")
	}
	if err := complete(c.Libraries); err != nil {
		return nil, err
	}
	return &c, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// complete checks the libraries against the generator's limits and builds what
// the generator reads: the plain variant, the steps of every variant, and the
// procedures each one leads to.
func complete(libs []libSpec) error {
	index := map[string][2]int{}
	for li := range libs {
		for pi := range libs[li].Procs {
			p := &libs[li].Procs[pi]
			index[libs[li].ID+":"+p.Key] = [2]int{li, pi}
		}
	}
	for li := range libs {
		l := &libs[li]
		if _, ok := schemas[l.Version]; !ok || len(l.Sites) == 0 || len(l.Procs) == 0 {
			return errors.New("library " + l.ID + " is incomplete")
		}
		for pi := range l.Procs {
			p := &l.Procs[pi]
			where := l.ID + ":" + p.Key
			p.Variants = append([]variant{{}}, p.Variants...)
			labels := map[string]bool{}
			for _, v := range p.Variants {
				n := len(p.Steps)
				if v.Step != "" {
					n++
				}
				if n < 4 || n > 10 || labels[v.Label] {
					return errors.New(where + ": variant " + strconv.Quote(v.Label) + " has a duplicate label or a step count outside 4-10")
				}
				labels[v.Label] = true
				steps := p.Steps
				if v.Step != "" {
					steps = append(append(append([]string(nil), p.Steps[:len(p.Steps)-1]...), v.Step), p.Steps[len(p.Steps)-1])
				}
				p.stepsAny = append(p.stepsAny, toAny(steps))
			}
			if l.Version == 2 && (len(p.Before) == 0 || len(p.Fixes) == 0) {
				return errors.New(where + " needs prerequisites and troubleshooting for a version 2 template")
			}
			if len(p.Tags) < 1 || len(p.Tags) > 4 || len(p.Apps) < 1 || len(p.Apps) > 3 ||
				len(p.Trail) < 3 || len(p.Trail) > 8 || len(p.QA) == 0 || p.Summary == "" || p.Category == "" {
				return errors.New(where + " breaks the limits on tags, applications, trail, questions or summary")
			}
			p.beforeAny, p.fixesAny = toAny(p.Before), toAny(p.Fixes)
			for _, next := range p.Next {
				ref := next
				if !strings.Contains(ref, ":") {
					ref = l.ID + ":" + ref
				}
				to, ok := index[ref]
				switch {
				case !ok:
					return errors.New(where + ": next " + next + " does not exist")
				case to[0] == li:
					p.nextLocal = append(p.nextLocal, to[1])
				case libs[to[0]].Workspace != l.Workspace:
					return errors.New(where + ": next " + next + " is in another workspace")
				default:
					p.nextRemote = append(p.nextRemote, to)
				}
			}
		}
	}
	return nil
}
