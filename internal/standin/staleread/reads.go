package staleread

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// readSpec is what a read asks of one table: GetItem's and Query's fields,
// and BatchGetItem's per table.
type readSpec struct {
	TableName                string
	IndexName                string
	Key                      item
	Keys                     []item
	ConsistentRead           bool
	ProjectionExpression     string
	ExpressionAttributeNames map[string]string
	AttributesToGet          []string
	Select                   string
}

// readPlan is how the proxy answers one table's part of an eventual read.
type readPlan struct {
	table  string
	schema *schema
	index  *index
	proj   *projection // the request's
	added  []string    // key attributes the proxy added to the projection
	// projected is true when an index query returns what the index
	// projects (no projection, and not Select ALL_ATTRIBUTES).
	projected bool
}

// plan prepares an eventually consistent read of spec: nil when it passes
// through (strongly consistent, a table the proxy does not know, or no
// write of the table within the window). It adds the table's key to a
// projection that leaves it out, so that the proxy can tell the items
// apart; raw is the request's part, rewritten in place.
func (p *Proxy) plan(r *http.Request, spec *readSpec, raw map[string]json.RawMessage) (*readPlan, error) {
	if spec.ConsistentRead || spec.Select == "COUNT" || !p.anyWithin(spec.TableName) {
		return nil, nil
	}
	s, err := p.schemaOf(r.Context(), spec.TableName)
	if err != nil || s == nil {
		return nil, err
	}
	proj, err := parseProjection(spec.ProjectionExpression, spec.ExpressionAttributeNames, spec.AttributesToGet)
	if err != nil {
		return nil, nil // the engine refuses it
	}
	pl := &readPlan{table: spec.TableName, schema: s, proj: proj}
	if spec.IndexName != "" {
		if pl.index = s.indexes[spec.IndexName]; pl.index == nil {
			return nil, nil // the engine refuses it
		}
		pl.projected = proj == nil && spec.Select != "ALL_ATTRIBUTES"
	}
	for _, k := range s.keys {
		if !proj.topLevel(k) {
			pl.added = append(pl.added, k)
		}
	}
	if len(pl.added) == 0 {
		return pl, nil
	}
	if spec.ProjectionExpression != "" {
		names := map[string]string{}
		for k, v := range spec.ExpressionAttributeNames {
			names[k] = v
		}
		expr := spec.ProjectionExpression
		for i, k := range pl.added {
			ph := "#staleread" + strconv.Itoa(i)
			for names[ph] != "" {
				ph += "x"
			}
			names[ph] = k
			expr += ", " + ph
		}
		raw["ProjectionExpression"], _ = json.Marshal(expr)
		raw["ExpressionAttributeNames"], _ = json.Marshal(names)
	} else {
		raw["AttributesToGet"], _ = json.Marshal(append(append([]string(nil), spec.AttributesToGet...), pl.added...))
	}
	return pl, nil
}

// answer returns what an eventual read sees of an item the engine
// returned (nil: nothing); stale is true when that is not the engine's.
func (p *Proxy) answer(pl *readPlan, it item, at time.Time) (out item, stale bool) {
	k, _, ok := pl.schema.keyOf(it)
	if !ok {
		return pl.strip(it), false
	}
	img, within := p.earlier(pl.table, k, at)
	if !within {
		return pl.strip(it), false
	}
	return pl.image(img), true
}

// image is what the read returns of an earlier image: nothing when there
// was no item, or none in the index; else the index's and the request's
// projections of it.
func (pl *readPlan) image(img item) item {
	if img == nil {
		return nil
	}
	if pl.index != nil {
		for _, k := range pl.index.keys {
			if _, ok := img[k]; !ok {
				return nil // not in the (sparse) index then
			}
		}
		if pl.projected {
			img = indexProjection(pl.schema, pl.index).apply(img)
		}
	}
	return pl.proj.apply(img)
}

// strip takes out of an item the key attributes only the proxy asked for.
func (pl *readPlan) strip(it item) item {
	if len(pl.added) == 0 {
		return it
	}
	out := make(item, len(it))
	for k, v := range it {
		out[k] = v
	}
	for _, k := range pl.added {
		delete(out, k)
	}
	return out
}

// getItem answers an eventual GetItem of a key written within the window
// with the image from before the write.
func (p *Proxy) getItem(w http.ResponseWriter, r *http.Request, _ string, body []byte) {
	var spec readSpec
	if json.Unmarshal(body, &spec) != nil || spec.ConsistentRead || !p.anyWithin(spec.TableName) {
		p.forward(w, r, body)
		return
	}
	at := p.opts.Now()
	resp, err := p.send(r, body)
	if err != nil {
		p.opts.Logf("staleread: GetItem: %v", err)
		writeError(w, "InternalServerError", "the engine behind the proxy is unreachable")
		return
	}
	s, err := p.schemaOf(r.Context(), spec.TableName)
	if resp.status != http.StatusOK || err != nil || s == nil {
		reply(w, resp, nil)
		return
	}
	k, _, ok := s.keyOf(spec.Key)
	if !ok {
		reply(w, resp, nil)
		return
	}
	img, within := p.earlier(spec.TableName, k, at)
	if !within {
		reply(w, resp, nil)
		return
	}
	proj, err := parseProjection(spec.ProjectionExpression, spec.ExpressionAttributeNames, spec.AttributesToGet)
	if err != nil {
		reply(w, resp, nil)
		return
	}
	var out map[string]json.RawMessage
	if json.Unmarshal(resp.body, &out) != nil {
		reply(w, resp, nil)
		return
	}
	delete(out, "Item")
	if img != nil {
		out["Item"], _ = json.Marshal(proj.apply(img))
	}
	p.staleItems.Add(1)
	b, _ := json.Marshal(out)
	reply(w, resp, b)
}

// batchGetItem answers the keys of an eventual table's part written within
// the window with their images from before the write.
func (p *Proxy) batchGetItem(w http.ResponseWriter, r *http.Request, _ string, body []byte) {
	var in struct{ RequestItems map[string]json.RawMessage }
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &in) != nil || json.Unmarshal(body, &raw) != nil {
		p.forward(w, r, body)
		return
	}
	at := p.opts.Now()
	plans := map[string]*readPlan{}
	specs := map[string]*readSpec{}
	for table, part := range in.RequestItems {
		spec := &readSpec{}
		var partRaw map[string]json.RawMessage
		if json.Unmarshal(part, spec) != nil || json.Unmarshal(part, &partRaw) != nil {
			p.forward(w, r, body)
			return
		}
		spec.TableName = table
		if !spec.ConsistentRead && p.anyWithin(table) {
			// Only the keys asked for can be stale: a part without any
			// written within the window passes through.
			if s, err := p.schemaOf(r.Context(), table); err == nil && s != nil && !p.keysWithin(table, s, spec.Keys, at) {
				continue
			}
		}
		pl, err := p.plan(r, spec, partRaw)
		if err != nil {
			p.opts.Logf("staleread: BatchGetItem: %v", err)
		}
		if pl == nil {
			continue
		}
		plans[table], specs[table] = pl, spec
		in.RequestItems[table], _ = json.Marshal(partRaw)
	}
	if len(plans) == 0 {
		p.forward(w, r, body)
		return
	}
	raw["RequestItems"], _ = json.Marshal(in.RequestItems)
	sent, _ := json.Marshal(raw)
	resp, err := p.send(r, sent)
	if err != nil {
		p.opts.Logf("staleread: BatchGetItem: %v", err)
		writeError(w, "InternalServerError", "the engine behind the proxy is unreachable")
		return
	}
	var out map[string]json.RawMessage
	var res struct {
		Responses       map[string][]item
		UnprocessedKeys map[string]struct{ Keys []item }
	}
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &out) != nil || json.Unmarshal(resp.body, &res) != nil {
		reply(w, resp, nil)
		return
	}
	for table, pl := range plans {
		unprocessed := map[string]bool{}
		for _, k := range res.UnprocessedKeys[table].Keys {
			if ks, _, ok := pl.schema.keyOf(k); ok {
				unprocessed[ks] = true
			}
		}
		for i, k := range res.UnprocessedKeys[table].Keys {
			res.UnprocessedKeys[table].Keys[i] = pl.strip(k)
		}
		// The engine's items of keys not written within the window, then
		// the earlier images of those that were.
		items := []item{}
		for _, it := range res.Responses[table] {
			if ks, _, ok := pl.schema.keyOf(it); ok {
				if _, within := p.earlier(table, ks, at); within {
					continue
				}
			}
			items = append(items, pl.strip(it))
		}
		for _, k := range specs[table].Keys {
			ks, _, ok := pl.schema.keyOf(k)
			if !ok || unprocessed[ks] {
				continue
			}
			if img, within := p.earlier(table, ks, at); within {
				p.staleItems.Add(1)
				if it := pl.proj.apply(img); it != nil {
					items = append(items, it)
				}
			}
		}
		if res.Responses == nil {
			res.Responses = map[string][]item{}
		}
		res.Responses[table] = items
	}
	out["Responses"], _ = json.Marshal(res.Responses)
	b, _ := json.Marshal(out)
	reply(w, resp, b)
}

// query answers an eventual Query or Scan: the items written within the
// window are replaced by their earlier images, or left out.
func (p *Proxy) query(w http.ResponseWriter, r *http.Request, op string, body []byte) {
	var spec readSpec
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &spec) != nil || json.Unmarshal(body, &raw) != nil {
		p.forward(w, r, body)
		return
	}
	at := p.opts.Now()
	pl, err := p.plan(r, &spec, raw)
	if err != nil {
		p.opts.Logf("staleread: %s: %v", op, err)
	}
	if pl == nil {
		p.forward(w, r, body)
		return
	}
	sent := body
	if len(pl.added) > 0 {
		sent, _ = json.Marshal(raw)
	}
	resp, err := p.send(r, sent)
	if err != nil {
		p.opts.Logf("staleread: %s: %v", op, err)
		writeError(w, "InternalServerError", "the engine behind the proxy is unreachable")
		return
	}
	if resp.status == http.StatusOK && len(pl.added) == 0 && !p.mayHold(pl.table, resp.body, at) {
		reply(w, resp, nil)
		return
	}
	var out map[string]json.RawMessage
	var res struct{ Items []item }
	if resp.status != http.StatusOK || json.Unmarshal(resp.body, &out) != nil || json.Unmarshal(resp.body, &res) != nil {
		reply(w, resp, nil)
		return
	}
	items := []item{}
	for _, it := range res.Items {
		got, stale := p.answer(pl, it, at)
		if stale {
			p.staleItems.Add(1)
		}
		if got != nil {
			items = append(items, got)
		}
	}
	out["Items"], _ = json.Marshal(items)
	out["Count"], _ = json.Marshal(len(items))
	b, _ := json.Marshal(out)
	reply(w, resp, b)
}
