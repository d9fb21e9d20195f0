package costs

import (
	"fmt"
	"sort"
	"strings"
)

// READMETable is the table of README.md's "What it costs".
func READMETable(p PriceList, a Assumptions) string {
	var b strings.Builder
	b.WriteString("| Tier | At rest, per month | Per million reads | Per million searches |\n|---|---|---|---|\n")
	reads := Dollars(PerMillionReads(p, a).Total())
	for _, d := range Domains {
		fmt.Fprintf(&b, "| `search=domain`, `opensearchSize=%s` | %s | %s | %s |\n", d.Name,
			Dollars(AtRestDomain(p, a, d).Total()), reads, Dollars(PerMillionSearchesDomain(p, a).Total()))
	}
	fmt.Fprintf(&b, "| `search=embedded` | %s | %s | %s |\n",
		Dollars(AtRestEmbedded(p, a).Total()), reads, Dollars(PerMillionSearchesEmbedded(p, a).Total()))
	return b.String()
}

// PricesTable lists every price with its source and date.
func PricesTable(p PriceList) string {
	rows := [][2]string{}
	add := func(what string, pr Price) {
		rows = append(rows, [2]string{what, fmt.Sprintf("| %s | %s per %s | %s | %s |", what, usd(pr.USD), pr.Unit, pr.Source, pr.Date)})
	}
	types := make([]string, 0, len(p.OpenSearchHour))
	for t := range p.OpenSearchHour {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		add("OpenSearch "+t, p.OpenSearchHour[t])
	}
	add("OpenSearch gp3 storage", p.OpenSearchGP3)
	add("Lambda duration", p.LambdaGBSecond)
	add("Lambda requests", p.LambdaRequest)
	add("API Gateway REST", p.APIGatewayREST)
	add("DynamoDB on-demand write", p.DynamoWrite)
	add("DynamoDB on-demand read", p.DynamoRead)
	add("DynamoDB storage", p.DynamoStorage)
	add("DynamoDB point-in-time recovery", p.DynamoPITR)
	add("S3 Standard storage", p.S3Storage)
	add("S3 PUT", p.S3Put)
	add("S3 GET", p.S3Get)
	add("WAF web ACL", p.WAFWebACL)
	add("WAF rule", p.WAFRule)
	add("WAF requests", p.WAFRequest)
	add("CloudWatch alarm", p.Alarm)
	add("CloudWatch Logs ingestion", p.LogsIngest)
	add("CloudWatch Logs storage", p.LogsStorage)
	add("X-Ray traces", p.XRayTrace)
	add("Bedrock Titan Text Embeddings V2", p.TitanToken)
	var b strings.Builder
	b.WriteString("| Item | Price | Source | Date |\n|---|---|---|---|\n")
	for _, r := range rows {
		b.WriteString(r[1] + "\n")
	}
	return b.String()
}

// usd prints a unit price without losing its digits.
func usd(v float64) string {
	s := fmt.Sprintf("%.10f", v)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if strings.HasSuffix(s, ".") || !strings.Contains(s, ".") {
		return "$" + s
	}
	if i := strings.Index(s, "."); len(s)-i-1 < 2 {
		s += "0"
	}
	return "$" + s
}

// Breakdown is every estimate line by line, for docs/costs.md.
func Breakdown(p PriceList, a Assumptions) string {
	var b strings.Builder
	section := func(title string, e Estimate) {
		fmt.Fprintf(&b, "**%s: %s**\n\n| Item | How | $ |\n|---|---|---|\n", title, Dollars(e.Total()))
		for _, l := range e {
			fmt.Fprintf(&b, "| %s | %s | %.3f |\n", l.What, l.How, l.USD)
		}
		b.WriteString("\n")
	}
	for _, d := range Domains {
		section("At rest, per month, search=domain, opensearchSize="+d.Name, AtRestDomain(p, a, d))
	}
	section("At rest, per month, search=embedded", AtRestEmbedded(p, a))
	section("Per million reads (both tiers)", PerMillionReads(p, a))
	section("Per million searches, search=domain", PerMillionSearchesDomain(p, a))
	section("Per million searches, search=embedded", PerMillionSearchesEmbedded(p, a))
	section("Per million documents imported and embedded (both tiers)", PerMillionDocumentsIndexed(p, a))
	section("Per million document changes, search=embedded, on top: segments", PerMillionChangesEmbedded(p, a))
	section("Per million searches, search=embedded, at 1,000,000 documents (3,631 MB in 40 segments): the cold starts' S3 GETs, in place of the same line at 10,000", ColdStartGETsAtSize(p, a, 3631, 40))
	return strings.TrimSuffix(b.String(), "\n")
}
