package staleread

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
	"time"
)

// written is one item a write changes.
type written struct {
	table string
	key   string
	item  item // the key's attributes
	w     *write
}

// targets lists the items a write request changes; false when the request
// does not parse or names a table the engine does not have, which the
// engine then refuses (or, for a table the proxy cannot read, changes
// unrecorded).
func (p *Proxy) targets(r *http.Request, op string, body []byte) ([]written, bool) {
	type single struct {
		TableName string
		Key, Item item
	}
	var singles []single
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem":
		var in single
		if json.Unmarshal(body, &in) != nil {
			return nil, false
		}
		singles = append(singles, in)
	case "BatchWriteItem":
		var in struct {
			RequestItems map[string][]struct {
				PutRequest    *struct{ Item item }
				DeleteRequest *struct{ Key item }
			}
		}
		if json.Unmarshal(body, &in) != nil {
			return nil, false
		}
		for table, reqs := range in.RequestItems {
			for _, w := range reqs {
				switch {
				case w.PutRequest != nil:
					singles = append(singles, single{TableName: table, Item: w.PutRequest.Item})
				case w.DeleteRequest != nil:
					singles = append(singles, single{TableName: table, Key: w.DeleteRequest.Key})
				}
			}
		}
	}
	var out []written
	seen := map[string]bool{}
	for _, s := range singles {
		sch, err := p.schemaOf(r.Context(), s.TableName)
		if err != nil {
			p.opts.Logf("staleread: %s: %v", op, err)
			return nil, false
		}
		if sch == nil {
			return nil, false
		}
		src := s.Key
		if src == nil {
			src = s.Item
		}
		k, key, ok := sch.keyOf(src)
		if !ok {
			return nil, false
		}
		if id := s.TableName + "\x00" + k; !seen[id] {
			seen[id] = true
			out = append(out, written{table: s.TableName, key: k, item: key})
		}
	}
	return out, true
}

// write records the items a write changes, with their images from before
// it, forwards it, and dates the records it made once the engine
// acknowledged it; a write the engine refused, or an item it left
// unprocessed, is forgotten.
func (p *Proxy) write(w http.ResponseWriter, r *http.Request, op string, body []byte) {
	ts, ok := p.targets(r, op, body)
	if !ok || len(ts) == 0 {
		p.forward(w, r, body)
		return
	}
	// Writes of one item are serialized, in the order of the locks.
	var stripes []int
	for _, t := range ts {
		h := fnv.New32a()
		h.Write([]byte(t.table + "\x00" + t.key))
		stripes = append(stripes, int(h.Sum32()%uint32(len(p.locks))))
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, i := range stripes {
		p.locks[i].Lock()
	}
	defer func() {
		for _, i := range stripes {
			p.locks[i].Unlock()
		}
	}()

	byTable := map[string]map[string]item{}
	for _, t := range ts {
		if byTable[t.table] == nil {
			byTable[t.table] = map[string]item{}
		}
		byTable[t.table][t.key] = t.item
	}
	before := map[string]map[string]item{}
	for table, keys := range byTable {
		sch, _ := p.schemaOf(r.Context(), table) // known by targets
		imgs, err := p.images(r.Context(), table, sch, keys)
		if err != nil {
			p.opts.Logf("staleread: %s: %v", op, err)
			writeError(w, "InternalServerError", "staleread: reading the items before the write: "+err.Error())
			return
		}
		before[table] = imgs
	}

	p.mu.Lock()
	for i := range ts {
		t := &ts[i]
		t.w = &write{before: before[t.table][t.key]}
		if p.writes[t.table] == nil {
			p.writes[t.table] = map[string][]*write{}
		}
		p.writes[t.table][t.key] = append(p.writes[t.table][t.key], t.w)
	}
	p.mu.Unlock()

	resp, err := p.send(r, body)
	unprocessed := map[string]bool{}
	if err == nil && resp.status == http.StatusOK && op == "BatchWriteItem" {
		var out struct {
			UnprocessedItems map[string][]struct {
				PutRequest    *struct{ Item item }
				DeleteRequest *struct{ Key item }
			}
		}
		_ = json.Unmarshal(resp.body, &out)
		for table, reqs := range out.UnprocessedItems {
			sch, _ := p.schemaOf(r.Context(), table)
			for _, q := range reqs {
				var src item
				switch {
				case q.PutRequest != nil:
					src = q.PutRequest.Item
				case q.DeleteRequest != nil:
					src = q.DeleteRequest.Key
				}
				if sch != nil {
					if k, _, ok := sch.keyOf(src); ok {
						unprocessed[table+"\x00"+k] = true
					}
				}
			}
		}
	}
	now := p.opts.Now()
	p.mu.Lock()
	for _, t := range ts {
		if err == nil && resp.status == http.StatusOK && !unprocessed[t.table+"\x00"+t.key] {
			t.w.done, t.w.at = true, now
			continue
		}
		list := p.writes[t.table][t.key]
		list = slices.DeleteFunc(list, func(x *write) bool { return x == t.w })
		if len(list) == 0 {
			delete(p.writes[t.table], t.key)
		} else {
			p.writes[t.table][t.key] = list
		}
	}
	p.sweep(now)
	p.mu.Unlock()
	if err != nil {
		p.opts.Logf("staleread: forwarding %s to %s: %v", op, p.target, err)
		writeError(w, "InternalServerError", "the engine behind the proxy is unreachable")
		return
	}
	reply(w, resp, nil)
}

// sweep forgets the writes older than the window, at most once a window.
// p.mu is held.
func (p *Proxy) sweep(now time.Time) {
	if now.Sub(p.lastSweep) < p.opts.Window {
		return
	}
	p.lastSweep = now
	for table, keys := range p.writes {
		for k, list := range keys {
			list = slices.DeleteFunc(list, func(x *write) bool { return p.expired(x, now) })
			if len(list) == 0 {
				delete(keys, k)
			} else {
				keys[k] = list
			}
		}
		if len(keys) == 0 {
			delete(p.writes, table)
		}
	}
}

// expired reports whether an eventually consistent read at now sees w.
func (p *Proxy) expired(w *write, now time.Time) bool {
	return w.done && now.Sub(w.at) >= p.opts.Window
}

// earlier returns the image an eventually consistent read at now sees of
// an item, and true, when a write of it is within the window: the image
// from before the oldest such write. It returns false when the read sees
// the engine's item.
func (p *Proxy) earlier(table, key string, now time.Time) (item, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range p.writes[table][key] {
		if !p.expired(w, now) {
			return w.before, true
		}
	}
	return nil, false
}

// anyWithin reports whether a write of table may be within the window at
// now: a read of it needs looking at.
func (p *Proxy) anyWithin(table string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.writes[table]) > 0
}

// mayHold reports whether an engine's answer of a read of table at now may
// hold an item written within the window: whether the partition key value
// of such an item appears in body. An item the engine returns carries its
// key, written as it was stored, so an answer without any of those values
// holds none of those items and passes through unread; most reads of a
// busy table are of other items than the last second's writes (the API's
// rate counters). A value the engine may have escaped in JSON, or a number
// (whose text may differ from its canonical form), is taken as present.
func (p *Proxy) mayHold(table string, body []byte, now time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for key, list := range p.writes[table] {
		if !slices.ContainsFunc(list, func(w *write) bool { return !p.expired(w, now) }) {
			continue
		}
		typ, rest, _ := strings.Cut(key, ":")
		val, _, _ := strings.Cut(rest, "\x00")
		if typ == "N" || !plainJSON(val) || bytes.Contains(body, []byte(`"`+val+`"`)) {
			return true
		}
	}
	return false
}

// plainJSON reports whether s is written as itself inside a JSON string by
// any encoder: printable ASCII without quotes, backslashes or the
// characters some encoders escape for HTML.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// keysWithin reports whether any of keys (of a table of schema s) has a
// write within the window at now: a GetItem or BatchGetItem of other keys
// sees the engine's items.
func (p *Proxy) keysWithin(table string, s *schema, keys []item, now time.Time) bool {
	for _, k := range keys {
		ks, _, ok := s.keyOf(k)
		if !ok {
			return true // the engine refuses it, or answers it; look
		}
		if _, within := p.earlier(table, ks, now); within {
			return true
		}
	}
	return false
}
