package dynalitetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

func TestStartReusesOneServer(t *testing.T) {
	a := Start(t)
	b := Start(t)
	if a != b || a.Endpoint != b.Endpoint {
		t.Fatalf("two Start calls gave %q and %q, want one shared server", a.Endpoint, b.Endpoint)
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(a.Endpoint) {
		t.Fatalf("Endpoint = %q, want http://127.0.0.1:N", a.Endpoint)
	}
}

func TestCreateTableAndListTables(t *testing.T) {
	s := Start(t)
	c := s.Client(t)
	ctx := context.Background()
	name := s.TableName(t)
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	if !slices.Contains(out.TableNames, name) {
		t.Fatalf("ListTables = %v, want it to contain %q", out.TableNames, name)
	}
	// Tables become ACTIVE at once (--createTableMs 0), so stores can wait
	// for them without the SDK waiter's 20 s sleeps.
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	if d.Table.TableStatus != types.TableStatusActive {
		t.Errorf("TableStatus = %s right after creation, want ACTIVE", d.Table.TableStatus)
	}
}

func TestTableNameIsUniqueAndValid(t *testing.T) {
	s := &Server{} // TableName does not need a running dynalite
	valid := regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)
	seen := map[string]bool{}
	check := func(t *testing.T) {
		for range 3 {
			n := s.TableName(t)
			if !valid.MatchString(n) {
				t.Errorf("TableName = %q, not a valid DynamoDB table name", n)
			}
			if seen[n] {
				t.Errorf("TableName returned %q twice", n)
			}
			seen[n] = true
		}
	}
	check(t)
	t.Run("sub test/with spaces?&"+strings.Repeat("x", 300), check)
}

// TestWatchdogKillsOrphanedDynalite runs a child test binary that starts
// dynalite and exits without Stop, as a crashed or killed test binary would,
// and checks that dynalite goes away with it.
func TestWatchdogKillsOrphanedDynalite(t *testing.T) {
	if os.Getenv("DYNALITETEST_ORPHAN_CHILD") == "1" {
		fmt.Println("ENDPOINT", Start(t).Endpoint)
		os.Exit(0) // no Stop: leave dynalite to the watchdog
	}
	Start(t) // skip, or fail, as the child would
	if testing.Short() {
		t.Skip("waits for the watchdog; skipped in -short mode")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdogKillsOrphanedDynalite$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DYNALITETEST_ORPHAN_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child test binary: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`ENDPOINT (\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("child printed no endpoint:\n%s", out)
	}
	u, err := url.Parse(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			return // nothing listens any more: dynalite is gone
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatalf("dynalite at %s still answers 10 s after its test binary exited", u.Host)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestModuleRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := moduleRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root + "/go.mod"); err != nil {
		t.Fatalf("moduleRoot(%s) = %s, which has no go.mod", wd, root)
	}
	if _, err := moduleRoot(t.TempDir()); err == nil {
		t.Errorf("moduleRoot of a temp dir succeeded, want an error")
	}
}

func TestStopWithoutStartIsSafe(t *testing.T) {
	mu.Lock()
	p := proc
	proc = nil
	mu.Unlock()
	defer func() {
		mu.Lock()
		proc = p
		mu.Unlock()
	}()
	Stop()
	Stop()
}

// TestTablesOnDisk: with DOCLIB_DYNALITE_PATH set, dynalite keeps its tables
// in that folder, not in its memory: a table created by one process is
// there for the next one started on the same folder.
func TestTablesOnDisk(t *testing.T) {
	Start(t) // skip, or fail, as the shared server would
	dir := t.TempDir()
	t.Setenv(EnvPath, dir)
	ctx := context.Background()
	tables := func(create string) []string {
		t.Helper()
		p, err := launchWithRetry()
		if err != nil {
			t.Fatal(err)
		}
		defer p.kill()
		hc := &http.Client{}
		defer hc.CloseIdleConnections()
		c := newClient(p.endpoint, hc)
		if create != "" {
			if _, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
				TableName:            aws.String(create),
				BillingMode:          types.BillingModePayPerRequest,
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
				KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
			}); err != nil {
				t.Fatalf("CreateTable: %v", err)
			}
		}
		out, err := c.ListTables(ctx, &dynamodb.ListTablesInput{})
		if err != nil {
			t.Fatalf("ListTables: %v", err)
		}
		return out.TableNames
	}
	if got := tables("on-disk"); !slices.Equal(got, []string{"on-disk"}) {
		t.Fatalf("the first process lists %v", got)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		t.Fatalf("the folder holds %d entries (%v), want LevelDB's files", len(entries), err)
	}
	if got := tables(""); !slices.Equal(got, []string{"on-disk"}) {
		t.Errorf("a second process on the same folder lists %v, want the table the first created", got)
	}
}
