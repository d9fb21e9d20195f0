// Package domainsizes holds the OpenSearch domain sizes of the stack (context
// opensearchSize): the CDK app builds the domain from them and the cost model
// (internal/checks/costs) prices them, both from these values. It imports
// neither the CDK nor AWS.
package domainsizes

import (
	"slices"
	"strings"
)

// Profile is a size of the OpenSearch domain (context opensearchSize).
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
type Profile struct {
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
	Small    = "small"
	Standard = "standard" // the default
	Large    = "large"
)

// Profiles lists the sizes, smallest first.
var Profiles = []Profile{
	{Name: Small, InstanceType: "r7g.medium.search", InstanceCount: 1, Zones: 1, VolumeGB: 20,
		For: "trials and small customers: one node in one zone, no copy of the index; losing the node means an outage until AWS replaces it and the index is rebuilt (doclib-admin reindex)"},
	{Name: Standard, InstanceType: "r7g.large.search", InstanceCount: 2, Zones: 2, VolumeGB: 100,
		For: "production: two nodes in two zones, each with a copy of the index; survives the loss of a node or a zone"},
	{Name: Large, InstanceType: "r7g.xlarge.search", InstanceCount: 3, Zones: 3, VolumeGB: 200,
		MasterType: "m7g.large.search", MasterCount: 3,
		For: "large or busy customers: three nodes in three zones, three copies of the index, and three dedicated master nodes as AWS recommends for production clusters"},
}

// Named returns the profile of that name.
func Named(name string) (Profile, bool) {
	i := slices.IndexFunc(Profiles, func(p Profile) bool { return p.Name == name })
	if i < 0 {
		return Profile{}, false
	}
	return Profiles[i], true
}

// Names lists the profiles' names, "small, standard, large".
func Names() string {
	names := make([]string, len(Profiles))
	for i, p := range Profiles {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}
