package standin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"

	"github.com/doclib/doclib/internal/standin/cfn"
	"github.com/doclib/doclib/internal/standin/iampolicy"
)

// snapshotTemplate is the shape CDK synthesizes for a versioned bucket with
// enforceSSL: the bucket, and a policy denying every call not over TLS.
const snapshotTemplate = `{"Resources": {
 "Snapshots1A2B3C4D": {"Type": "AWS::S3::Bucket", "Properties": {
   "VersioningConfiguration": {"Status": "Enabled"},
   "PublicAccessBlockConfiguration": {"BlockPublicAcls": true}}},
 "SnapshotsPolicy5E6F7A8B": {"Type": "AWS::S3::BucketPolicy", "Properties": {
   "Bucket": {"Ref": "Snapshots1A2B3C4D"},
   "PolicyDocument": {"Version": "2012-10-17", "Statement": [
    {"Action": "s3:*", "Condition": {"Bool": {"aws:SecureTransport": "false"}}, "Effect": "Deny",
     "Principal": {"AWS": "*"},
     "Resource": [{"Fn::GetAtt": ["Snapshots1A2B3C4D", "Arn"]},
                  {"Fn::Join": ["", [{"Fn::GetAtt": ["Snapshots1A2B3C4D", "Arn"]}, "/*"]]}]}]}}},
 "Plain9C0D1E2F": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "doclib-plain"}}
}}`

func TestBucketsFromTheTemplate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "template.json")
	if err := os.WriteFile(path, []byte(snapshotTemplate), 0o644); err != nil {
		t.Fatal(err)
	}
	tpl, err := cfn.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	vals := physical(tpl, "Doclib-demo", "run1", "")
	bs, policies, err := buckets(tpl, &cfn.Resolver{T: tpl, V: vals})
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].id != "Plain9C0D1E2F" || bs[0].name != "doclib-plain" || bs[0].versioned ||
		bs[1].id != "Snapshots1A2B3C4D" || !bs[1].versioned {
		t.Fatalf("buckets %+v", bs)
	}
	name := bs[1].name
	if name != strings.ToLower(name) || len(name) > 63 || !strings.HasPrefix(name, "doclib-demo-snapshots") {
		t.Errorf("generated bucket name %q: want lower case, at most 63 characters", name)
	}
	p := policies[name]
	if p == nil || len(policies) != 1 {
		t.Fatalf("policies %v: want the snapshot bucket's", policies)
	}
	// The resolved policy names the bucket's ARN: its Deny fires without
	// TLS and not with it.
	req := iampolicy.Request{Principal: "arn:aws:iam::" + Account + ":role/R", Action: "s3:GetObject",
		Resource: "arn:aws:s3:::" + name + "/snapshots/current.json"}
	req.Context = map[string][]string{"aws:SecureTransport": {"false"}}
	if d := iampolicy.Evaluate(req, nil, p); d.Allowed || !strings.Contains(d.Reason, "explicit deny") {
		t.Errorf("without TLS: %+v; want an explicit deny", d)
	}

	f, err := startS3(bs)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		v, err := f.Backend.VersioningConfiguration(b.name)
		if err != nil {
			t.Fatalf("bucket %s: %v", b.name, err)
		}
		if enabled := v.Status == gofakes3.VersioningEnabled; enabled != b.versioned {
			t.Errorf("bucket %s: versioning %q", b.name, v.Status)
		}
	}
}
