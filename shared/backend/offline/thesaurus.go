package offline

// thesaurus lists groups of words and phrases that mean nearly the same in the
// work doclib documents: IT operations, finance, sales operations and office work.
// A word or phrase of a group adds the group's concept to a text's features, so
// "sign in" and "log in", or "supplier" and "vendor", share part of their vectors.
//
// It is general vocabulary of these trades, written once; it is not tuned to any
// data set or test query, and it is small on purpose: a phrase missing here is
// simply not a synonym to the offline embedder. A real embedding model (through
// the OpenAI-compatible embedder) knows far more.
var thesaurus = [][]string{
	// Accounts and access.
	{"log in", "login", "logon", "log on", "sign in", "signin", "sign on", "authenticate", "authentication"},
	{"log out", "logout", "log off", "logoff", "sign out", "signout"},
	{"password", "passcode", "passphrase", "credentials", "pin"},
	{"reset", "recover", "recovery", "forgot", "forgotten", "lost"},
	{"locked", "lockout", "locked out", "blocked", "frozen"},
	{"unlock", "unblock", "reactivate", "re-enable", "restore access"},
	{"mfa", "2fa", "two-factor", "two factor", "multi-factor", "multifactor", "authenticator app", "otp", "one-time code", "verification code"},
	{"permission", "access rights", "rights", "privileges", "entitlement", "role"},
	{"grant", "give access", "provision", "assign"},
	{"remove", "delete", "revoke", "deactivate", "disable", "deprovision"},
	{"sso", "single sign-on", "single sign on", "identity provider", "idp"},
	// People.
	{"user", "employee", "staff", "colleague", "team member", "worker", "person"},
	{"new hire", "new starter", "new employee", "joiner", "starter", "onboard", "onboarding"},
	{"leaver", "offboard", "offboarding", "departing", "termination", "resignation", "last day", "exit"},
	{"manager", "supervisor", "boss", "team lead", "line manager"},
	{"contractor", "freelancer", "consultant", "temp"},
	// Devices and systems.
	{"laptop", "notebook", "computer", "pc", "macbook", "workstation", "desktop"},
	{"phone", "mobile", "smartphone", "iphone", "android", "cell"},
	{"printer", "printing", "print"},
	{"network", "wifi", "wi-fi", "wireless", "internet", "connectivity"},
	{"vpn", "remote access", "tunnel"},
	{"email", "e-mail", "mail", "mailbox", "inbox"},
	{"install", "installation", "set up", "setup", "deploy", "configure"},
	{"update", "upgrade", "patch"},
	{"backup", "back up", "snapshot", "restore"},
	{"broken", "not working", "fails", "failure", "error", "crash", "outage", "down"},
	{"ticket", "incident", "case", "service request", "help desk", "helpdesk"},
	{"security", "phishing", "malware", "virus", "breach", "vulnerability"},
	{"shared drive", "file share", "folder", "drive"},
	{"encrypt", "encryption", "bitlocker", "filevault"},
	// Finance.
	{"invoice", "bill", "billing"},
	{"pay", "payment", "remit", "remittance", "settle", "payout"},
	{"vendor", "supplier", "payee", "seller"},
	{"customer", "client", "buyer"},
	{"expense", "expenses", "spend", "reimbursement", "reimburse", "out-of-pocket", "receipt", "expense claim"},
	{"payroll", "salary", "salaries", "wages", "paycheck", "payslip", "pay run", "compensation"},
	{"month end", "month-end", "period close", "close the books", "closing", "year end", "year-end"},
	{"reconcile", "reconciliation", "tie out", "match"},
	{"bank", "bank account", "bank statement"},
	{"tax", "vat", "sales tax", "gst", "withholding", "1099", "w-9", "w9"},
	{"budget", "forecast", "projection", "plan"},
	{"purchase order", "po", "requisition", "procurement", "purchasing"},
	{"refund", "credit memo", "credit note", "chargeback"},
	{"collections", "overdue", "past due", "late payment", "dunning", "unpaid", "outstanding", "chase"},
	{"audit", "auditor", "compliance", "controls", "sox"},
	{"journal entry", "journal", "accrual", "adjusting entry"},
	{"write off", "write-off", "bad debt"},
	{"approve", "approval", "authorise", "authorize", "sign off", "sign-off", "accept"},
	{"reject", "decline", "deny", "refuse"},
	// Sales.
	{"lead", "prospect", "inquiry", "enquiry"},
	{"opportunity", "deal", "oppty", "pipeline"},
	{"quote", "quotation", "proposal", "estimate", "pricing"},
	{"discount", "rebate", "markdown", "price reduction"},
	{"contract", "agreement", "msa", "order form", "sow"},
	{"renewal", "renew", "extension", "extend"},
	{"cancel", "cancellation", "churn"},
	{"crm", "salesforce", "hubspot"},
	{"territory", "region", "area"},
	{"commission", "incentive", "bonus", "spiff"},
	{"demo", "demonstration", "presentation", "pitch"},
	{"handoff", "hand-off", "handover", "kickoff", "kick-off"},
	// General work.
	{"meeting", "call", "sync"},
	{"report", "reporting", "dashboard"},
	{"schedule", "calendar", "booking"},
	{"fix", "repair", "resolve", "troubleshoot", "solve"},
	{"find", "search", "look up", "lookup", "locate"},
	{"check", "verify", "validate", "confirm"},
	{"urgent", "asap", "priority", "critical"},
	{"create", "add", "set up a new"},
	{"change", "modify", "edit", "amend"},
}
