package standin

import (
	"fmt"
	"sort"

	"github.com/doclib/doclib/internal/standin/cfn"
	"github.com/doclib/doclib/internal/standin/fakes3"
	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// bucket is one AWS::S3::Bucket of the template.
type bucket struct {
	id, name  string
	versioned bool
}

// buckets returns the template's buckets, by logical ID, and their
// policies (AWS::S3::BucketPolicy) by bucket name.
func buckets(t *cfn.Template, r *cfn.Resolver) ([]bucket, map[string]*iampolicy.Policy, error) {
	var out []bucket
	for _, id := range t.OfType("AWS::S3::Bucket") {
		b := bucket{id: id, name: r.V.Ref[id]}
		if vc, ok := t.Resources[id].Properties["VersioningConfiguration"]; ok {
			v, err := r.Resolve(vc)
			if err != nil {
				return nil, nil, fmt.Errorf("standin: bucket %s: VersioningConfiguration: %w", id, err)
			}
			m, _ := v.(map[string]any)
			b.versioned = m["Status"] == "Enabled"
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })

	policies := map[string]*iampolicy.Policy{}
	for _, id := range t.OfType("AWS::S3::BucketPolicy") {
		props := t.Resources[id].Properties
		name, err := r.String(props["Bucket"])
		if err != nil {
			return nil, nil, fmt.Errorf("standin: bucket policy %s: Bucket: %w", id, err)
		}
		doc, err := r.JSON(props["PolicyDocument"])
		if err != nil {
			return nil, nil, fmt.Errorf("standin: bucket policy %s: %w", id, err)
		}
		p, err := iampolicy.Parse(doc)
		if err != nil {
			return nil, nil, fmt.Errorf("standin: bucket policy %s: %w", id, err)
		}
		if _, dup := policies[name]; dup {
			// CloudFormation keeps one policy per bucket: a second replaces
			// the first, in an order the template does not fix.
			return nil, nil, fmt.Errorf("standin: bucket %s has two AWS::S3::BucketPolicy resources", name)
		}
		policies[name] = p
	}
	return out, policies, nil
}

// startS3 makes the buckets in a new fake S3, with versioning on where the
// template turns it on.
func startS3(bs []bucket) (*fakes3.Server, error) {
	f := fakes3.New()
	for _, b := range bs {
		if err := f.CreateBucket(b.name, b.versioned); err != nil {
			return nil, fmt.Errorf("standin: %w", err)
		}
	}
	return f, nil
}
