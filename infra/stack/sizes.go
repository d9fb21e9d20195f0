package stack

import (
	"slices"
	"strings"
)

// DomainProfile is a size of the OpenSearch domain (context opensearchSize).
//
// Every profile uses Graviton memory-optimised (r7g) data nodes. The k-NN
// graphs live outside the JVM heap, which takes half of a node's memory, and
// the k-NN plugin may use half of what is left (its circuit breaker): 2 GiB of
// graphs on an 8 GiB r7g.medium, 4 GiB on an r7g.large, 8 GiB on an
// r7g.xlarge. A 1024-dimension vector with its HNSW links (m 16) takes about
// 4.5 KiB (AWS's estimate, 1.1 × (4 × dimensions + 8 × m) bytes), so a node
// holds the vectors of about 0.45, 0.9 and 1.8 million documents and shared
// recordings. T3 types are burstable and AWS does not recommend them
// for production; they are not offered.
type DomainProfile struct {
	Name          string
	InstanceType  string
	InstanceCount int
	// Zones is the availability zones the data nodes spread over; 1 turns
	// zone awareness off.
	Zones int
	// MasterType and MasterCount are the dedicated master nodes; none when 0.
	MasterType  string
	MasterCount int
	VolumeGB    int
	// For says who the profile is for.
	For string
}

// The sizes. The index keeps up to two copies of its one shard, one per data
// node (auto_expand_replicas 0-2): none on small, one on standard, two on
// large, so that large survives the loss of a zone and standard of a node.
const (
	sizeSmall    = "small"
	sizeStandard = "standard"
	sizeLarge    = "large"
)

var (
	smallProfile = DomainProfile{Name: sizeSmall, InstanceType: "r7g.medium.search", InstanceCount: 1, Zones: 1, VolumeGB: 20,
		For: "trials and small customers: one node in one zone, no copy of the index; losing the node means an outage until AWS replaces it and the index is rebuilt (doclib-admin reindex)"}
	standardProfile = DomainProfile{Name: sizeStandard, InstanceType: "r7g.large.search", InstanceCount: 2, Zones: 2, VolumeGB: 100,
		For: "production: two nodes in two zones, each with a copy of the index; survives the loss of a node or a zone"}
	largeProfile = DomainProfile{Name: sizeLarge, InstanceType: "r7g.xlarge.search", InstanceCount: 3, Zones: 3, VolumeGB: 200,
		MasterType: "m7g.large.search", MasterCount: 3,
		For: "large or busy customers: three nodes in three zones, three copies of the index, and three dedicated master nodes as AWS recommends for production clusters"}
)

// DomainProfiles lists the sizes, smallest first.
var DomainProfiles = []DomainProfile{smallProfile, standardProfile, largeProfile}

func profileNamed(name string) (DomainProfile, bool) {
	i := slices.IndexFunc(DomainProfiles, func(p DomainProfile) bool { return p.Name == name })
	if i < 0 {
		return DomainProfile{}, false
	}
	return DomainProfiles[i], true
}

func profileNames() string {
	names := make([]string, len(DomainProfiles))
	for i, p := range DomainProfiles {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
