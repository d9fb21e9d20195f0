package doclib

// DataSet is a whole data set in domain form, with every derived value computed
// (documents' RecordingCount, libraries' counts and label lists, edges' titles
// and libraries, content in template order). It lives here, not with the file
// format, so that every backend can load one without knowing how it was read.
type DataSet struct {
	Workspaces []*Workspace
	Devices    []*Device
	APIKeys    []*APIKey
	Libraries  []*Library
	Documents  []*Document
	Edges      []*Edge
	Recordings []*Recording
}
