package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"
)

// snapshotPrefix holds every object of the embedded tier (shared/backend/
// snapshot): the manifest, snapshots/manifest.json, and the segments it
// names under segmentPrefix (and, from earlier versions, the single snapshot
// snapshots/index.snap and its pointer snapshots/current.json). The roles'
// grants name them.
const (
	snapshotPrefix = "snapshots/"
	segmentPrefix  = "snapshots/segments/"
)

// The snapshots' lifecycle. Every commit of the indexer writes the manifest
// again as a new version of one key, so old versions would pile up; the
// lifecycle, not the indexer, deletes them.
//
//   - The 3 newest noncurrent versions are kept whatever their age: the
//     manifests an operator can restore if a new one turns out bad, even when
//     the index has not changed for months (with the segments they name,
//     unless those were retired more than a day ago).
//   - Older noncurrent versions go 7 days after they were replaced: a week
//     covers a rollback found after a weekend. A burst of imports may publish
//     a manifest every few seconds; a week of them is what storage holds at
//     most, at S3's price per GB-month.
//   - Incomplete multipart uploads are aborted after 1 day, the shortest S3
//     allows: their parts are billed but never visible. The indexer aborts
//     the upload of a segment that fails; one cut short by the function's
//     timeout (or a crash) has no one left to abort it.
//
// Segments are written once each, never replaced: the indexer deletes those
// no manifest has named for 15 minutes (a merge's inputs, a reindexed
// index), which leaves their data as noncurrent versions. A second rule,
// on the segments' prefix, expires those a day after the delete and then
// removes the delete markers left alone; where the two rules overlap S3
// honours the shorter expiration ("How Amazon S3 handles conflicts in
// lifecycle configurations"), so the week and the three versions kept are
// the manifest's and the earlier format's.
const (
	snapshotVersionsKept    = 3
	snapshotNoncurrentDays  = 7
	snapshotAbortUploadDays = 1
	segmentNoncurrentDays   = 1
)

// S3 access of the embedded tier, written out rather than taken from
// Bucket.GrantRead/GrantReadWrite, which add s3:GetBucket*, s3:List*,
// s3:DeleteObject* and more.
//
// The search function (and the MCP function, which searches alike) GETs the
// pointer (If-None-Match) and the snapshot by versionId
// (s3:GetObjectVersion). s3:ListBucket on the bucket is what makes S3
// answer a GET of a missing key 404 rather than 403 (S3's GetObject
// permissions), so that "no snapshot yet" is told apart from "denied"; it
// lists key names, not data. The indexer also PUTs (the conditional
// If-Match/If-None-Match write of the manifest needs s3:PutObject only), and
// deletes retired segments, under segmentPrefix only (s3:DeleteObject: a
// delete marker; it cannot delete versions, s3:DeleteObjectVersion). It
// streams a large segment as a multipart upload (none need fit a Lambda
// function's /tmp): creating the upload, its parts and completing it ask
// s3:PutObject, and the abort that ends a failed one s3:AbortMultipartUpload
// ("Multipart upload API and permissions" in S3's user guide), which frees
// the parts at once rather than after the lifecycle's day.
var (
	snapshotReadActions  = []string{"s3:GetObject", "s3:GetObjectVersion"}
	snapshotWriteActions = []string{"s3:GetObject", "s3:GetObjectVersion", "s3:PutObject", "s3:AbortMultipartUpload"}
	snapshotListActions  = []string{"s3:ListBucket"}
	segmentDeleteActions = []string{"s3:DeleteObject"}
)

// newSnapshots is the embedded tier's bucket.
func newSnapshots(s awscdk.Stack, cfg Config) *searchBackend {
	b := awss3.NewBucket(s, jsii.String("Snapshots"), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		// S3-managed keys (SSE-S3) rather than KMS: the snapshots are derived
		// from the table and hold nothing it does not; a customer managed key
		// costs a monthly fee, idle or not, and every GET and PUT would be a
		// KMS request with a key policy to keep in step with the roles.
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		MinimumTLSVersion: jsii.Number(1.2),
		Versioned:         jsii.Bool(true),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("ExpireOldSnapshots"),
			NoncurrentVersionsToRetain:          jsii.Number(snapshotVersionsKept),
			NoncurrentVersionExpiration:         awscdk.Duration_Days(jsii.Number(snapshotNoncurrentDays)),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(snapshotAbortUploadDays)),
		}, {
			Id:                          jsii.String("ExpireRetiredSegments"),
			Prefix:                      jsii.String(segmentPrefix),
			NoncurrentVersionExpiration: awscdk.Duration_Days(jsii.Number(segmentNoncurrentDays)),
			ExpiredObjectDeleteMarker:   jsii.Bool(true),
		}},
		// As the table: kept when the stack is deleted, unless it is a test
		// stack, whose `cdk destroy` then empties it (every version) and
		// deletes it.
		RemovalPolicy:     cfg.removal(),
		AutoDeleteObjects: jsii.Bool(!cfg.Retain),
	})
	objects := b.ArnForObjects(jsii.String(snapshotPrefix + "*"))
	return &searchBackend{
		bucket: b,
		grant: func(role awsiam.IRole, write bool) {
			actions := snapshotReadActions
			if write {
				actions = snapshotWriteActions
			}
			role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("Snapshots"),
				Actions:   jsii.Strings(actions...),
				Resources: &[]*string{objects},
			}))
			if write {
				role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
					Sid:       jsii.String("RetiredSegments"),
					Actions:   jsii.Strings(segmentDeleteActions...),
					Resources: &[]*string{b.ArnForObjects(jsii.String(segmentPrefix + "*"))},
				}))
			}
			role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Sid:       jsii.String("SnapshotsMissing"),
				Actions:   jsii.Strings(snapshotListActions...),
				Resources: &[]*string{b.BucketArn()},
			}))
		},
		node: b.Node().DefaultChild(),
	}
}
