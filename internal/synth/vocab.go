package synth

// The tables below are the fixed vocabulary every Generator draws from. They
// do not depend on the seed: the seed only decides which entries a card gets,
// so two catalogs built with different seeds share tags, words and providers
// and a benchmark query mix stays meaningful across seeds.

// Media types. modeText is the informal value real cards carry instead of
// text/plain; the registry must keep it and match it against text/*.
const (
	modePlain    = "text/plain"
	modeText     = "text"
	modeJSON     = "application/json"
	modeMarkdown = "text/markdown"
	modeCSV      = "text/csv"
	modeHTML     = "text/html"
	modeXML      = "application/xml"
	modePDF      = "application/pdf"
	modePNG      = "image/png"
	modeJPEG     = "image/jpeg"
	modeWebP     = "image/webp"
	modeWAV      = "audio/wav"
	modeMPEG     = "audio/mpeg"
	modeMP4      = "video/mp4"
	modeXLSX     = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)

// weighted is one choice of a discrete distribution.
type weighted[T any] struct {
	w float64
	v T
}

// defaultInputs and defaultOutputs are the card-level mode sets. Most cards
// declare text and JSON; a minority use only one, the informal "text", or
// add markdown.
var (
	defaultInputs = []weighted[[]string]{
		{0.62, []string{modePlain, modeJSON}},
		{0.14, []string{modePlain}},
		{0.08, []string{modeText}},
		{0.06, []string{modeJSON}},
		{0.05, []string{modeText, modeJSON}},
		{0.05, []string{modePlain, modeJSON, modePDF}},
	}
	defaultOutputs = []weighted[[]string]{
		{0.60, []string{modePlain, modeJSON}},
		{0.15, []string{modePlain}},
		{0.08, []string{modeText}},
		{0.07, []string{modeJSON}},
		{0.10, []string{modePlain, modeJSON, modeMarkdown}},
	}
	// genericModes feed skill overrides when a skill template names none.
	genericModes = []weighted[string]{
		{0.30, modePlain},
		{0.22, modeJSON},
		{0.10, modeMarkdown},
		{0.08, modeCSV},
		{0.07, modeHTML},
		{0.06, modeXML},
		{0.07, modePDF},
		{0.05, modeText},
		{0.05, modeXLSX},
	}
)

// skillTmpl is one kind of skill a domain offers. in/out are the modes the
// skill declares when it overrides the card defaults; nil means "pick from
// genericModes".
type skillTmpl struct {
	id       string
	name     string
	desc     string
	examples []string
	in, out  []string
	tags     []string
}

// domain is a business area. Agents have one primary domain and sometimes a
// secondary one; names, descriptions, tags and skills come from them.
type domain struct {
	key    string
	weight float64
	titles []string // agent name heads: "Invoice", "Accounts Payable"
	blurbs []string // description phrases: "<name> <blurb>"
	tags   []string // hand-picked domain tags, most common first
	nouns  []string // stems for compound tags ("<noun>-<qualifier>")
	skills []skillTmpl
}

// roles end an agent name.
var roles = []string{"Agent", "Assistant", "Copilot", "Bot", "Service", "Expert", "Helper", "Navigator", "Desk", "Hub"}

// tagQualifiers combine with domain nouns into the long tail of tags.
var tagQualifiers = []string{"api", "automation", "analysis", "extraction", "reporting", "validation", "monitoring", "search", "classification", "sync"}

// genericTags head the global tag ranking: they cut across domains, so the
// Zipf head makes a few of them very common ("data", "search", "text").
var genericTags = []string{
	"data", "search", "text", "automation", "ai", "api", "nlp", "analysis", "summarization",
	"extraction", "classification", "reporting", "workflow", "chat", "assistant", "llm",
	"documents", "integration", "productivity", "enterprise", "json", "qa", "agents",
	"insights", "monitoring", "generation", "validation", "rag", "knowledge", "forecasting",
	"scheduling", "notifications", "batch", "realtime", "multilingual", "compliance",
	"recommendation", "ocr", "summaries", "planning", "tools", "orchestration", "research",
	"dashboard", "etl", "webhooks", "email", "spreadsheets", "english", "files",
}

// descriptionTails add common sentences to skill descriptions.
var descriptionTails = []string{
	" Returns structured JSON.",
	" Keeps an audit trail of every decision for later review.",
	" Asks a clarifying question when the request is ambiguous.",
	" Handles documents of up to 300 pages.",
	" Respects role-based access to the underlying data.",
	" Typical latency is under two seconds.",
	" Supports batch requests of up to 500 items.",
	" Works in English, German, French and Spanish.",
	" Results include a confidence score between 0 and 1.",
	" Responses stream as partial results.",
	" Answers with citations to the source documents.",
	" Limits: <= 20 MB per request & 60 requests per minute.",
}

// cardTails add a common sentence to agent descriptions.
var cardTails = []string{
	"Ready to use with no setup.",
	"Built for enterprise teams.",
	"Runs in the EU and US regions.",
	"Integrates with Slack, Teams and email.",
	"Designed for high-volume, low-latency workloads.",
	"SOC 2 Type II audited.",
	"Powered by retrieval-augmented generation over your own documents.",
	"Open beta: interfaces may change.",
}

// rareWords appear only through a rare "specialty" sentence, each in about
// rareWordShare of cards, so a text query for one hits a handful of agents
// even in a 100k catalog.
var rareWords = []string{
	"bathymetry", "cuneiform", "zymurgy", "heliostat", "ptychography", "speleology",
	"dendrochronology", "numismatics", "philately", "vexillology", "orrery", "tribology",
	"palynology", "horology", "campanology", "oology", "lepidopterology", "glyptics",
	"sigillography", "cartouche",
}

// rareWordShare is the chance that a card mentions one given rare word.
const rareWordShare = 0.0001

// commonQueryWords are the text-search terms Vocabulary measures. They come
// from the domain texts below; their shares span roughly 0.1%–10%.
var commonQueryWords = []string{
	"invoice", "invoices", "translate", "translation", "pdf", "kubernetes", "flight", "hotel",
	"contract", "contracts", "compliance", "patient", "clinical", "refund", "shipment", "sql",
	"resume", "candidates", "transcribe", "speech", "image", "images", "vulnerability", "phishing",
	"forecast", "dashboard", "campaign", "seo", "quiz", "terraform", "helm", "expense", "fraud",
	"inventory", "customs", "ticket", "sentiment", "summarize", "receipts", "gdpr", "payroll",
	"mortgage", "python", "json", "csv", "email", "document",
}

// orgHeads and orgTails combine into about 3,000 provider organizations.
var (
	orgHeads = []string{
		"Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Hooli", "Vandelay", "Soylent",
		"Tyrell", "Cyberdyne", "Aperture", "Massive", "Wonka", "Gringotts", "Oscorp", "Nakatomi",
		"Monarch", "Bluth", "Dunder", "Pied Piper", "Prestige", "Virtucon", "Zorg", "Nimbus",
		"Ledgerly", "Quantly", "Brightwave", "Northwind", "Contoso", "Fabrikam", "Tailspin",
		"Woodgrove", "Adatum", "Litware", "Proseware", "Lucerne", "Coho", "Fourth Coffee",
		"Wingtip", "Alpine", "Margie", "Humongous", "Blue Yonder", "Trey", "Datum", "Relecloud",
		"Zürich Data", "Société Numérique", "Nordlys Språk", "Kyōto Systems", "Øresund", "São Paulo Cloud",
		"Helix", "Vertex", "Cobalt", "Lumen", "Orbit", "Quasar", "Sable", "Tandem",
	}
	orgTails = []string{
		"Labs", "AI", "Systems", "Analytics", "Technologies", "Cloud", "Software", "Solutions",
		"Group", "Inc.", "GmbH", "Ltd", "LLC", "S.A.", "AG", "Networks", "Digital", "Data",
		"Dynamics", "Works", "Partners", "Holdings", "Robotics", "Intelligence", "Platforms",
		"Ventures", "Studio", "Consulting", "Services", "Industries", "Research", "Foundry",
		"Logic", "Devices", "Interactive", "Media", "Health", "Finance", "Security", "Mobility",
		"Commerce", "Bio", "Energy", "Capital", "Learning", "Automation", "Insights", "Collective",
		"Co.", "Corp.",
	}
)

var (
	pdfOrImage = []string{modePDF, modePNG, modeJPEG}
	jsonOnly   = []string{modeJSON}
	jsonText   = []string{modeJSON, modePlain}
	textOnly   = []string{modePlain}
	mdText     = []string{modeMarkdown, modePlain}
	sheets     = []string{modeCSV, modeXLSX, modeJSON}
	images     = []string{modePNG, modeJPEG, modeWebP}
	audio      = []string{modeWAV, modeMPEG}
)

var domains = []domain{
	{
		key: "analytics", weight: 0.07,
		titles: []string{"Analytics", "Insights", "BI", "Metrics", "Data"},
		blurbs: []string{"answers business questions over your warehouse", "builds dashboard summaries and KPI reports", "explains anomalies in metrics and time series", "turns natural language into SQL queries"},
		tags:   []string{"analytics", "sql", "bi", "dashboards", "kpi", "metrics", "time-series", "warehouse", "visualization"},
		nouns:  []string{"kpi", "metric", "cohort", "funnel", "warehouse", "query", "chart", "trend", "anomaly", "segment"},
		skills: []skillTmpl{
			{"nl-to-sql", "Natural language to SQL", "Translates a business question into SQL for Postgres, BigQuery or Snowflake and explains the query.", []string{"How many orders shipped late last quarter?", "Top 10 customers by revenue in 2024"}, textOnly, []string{modeJSON, modePlain}, []string{"sql", "text-to-sql"}},
			{"kpi-report", "KPI report", "Builds a weekly KPI report with trends, comparisons and commentary for a dashboard.", []string{"Weekly KPI report for the sales team", "Compare churn this month vs last month"}, jsonText, []string{modeMarkdown, modeHTML, modePDF}, []string{"kpi", "reporting"}},
			{"anomaly-explain", "Anomaly explanation", "Detects anomalies in a metric time series and ranks the most likely drivers.", []string{"Why did signups drop on Tuesday?"}, sheets, jsonOnly, []string{"anomaly-detection", "time-series"}},
			{"forecast", "Metric forecast", "Produces a 90-day forecast with confidence intervals from historical CSV data.", []string{"Forecast daily active users for next quarter", "Forecast demand for SKU 1182"}, sheets, []string{modeJSON, modeCSV}, []string{"forecasting", "time-series"}},
			{"chart-builder", "Chart builder", "Turns a table into a chart specification and a rendered image.", []string{"Bar chart of revenue by region"}, sheets, []string{modePNG, modeJSON}, []string{"visualization", "charts"}},
		},
	},
	{
		key: "support", weight: 0.07,
		titles: []string{"Support", "Help Desk", "Customer Care", "Service Desk", "CX"},
		blurbs: []string{"resolves customer tickets using your knowledge base", "triages and routes support tickets", "drafts empathetic replies for support agents", "answers product questions around the clock"},
		tags:   []string{"customer-support", "helpdesk", "tickets", "cx", "faq", "triage", "zendesk", "knowledge-base", "chatbot"},
		nouns:  []string{"ticket", "faq", "escalation", "reply", "case", "csat", "macro", "queue", "sla", "chat"},
		skills: []skillTmpl{
			{"ticket-triage", "Ticket triage", "Classifies an incoming ticket by product, urgency and sentiment and routes it to the right queue.", []string{"Route this ticket: my order never arrived", "Is this ticket urgent?"}, jsonText, jsonOnly, []string{"triage", "tickets"}},
			{"answer-faq", "FAQ answering", "Answers customer questions from the help center and cites the articles it used.", []string{"How do I reset my password?", "What is your return policy?"}, textOnly, mdText, []string{"faq", "knowledge-base"}},
			{"draft-reply", "Reply drafting", "Drafts a reply to a customer email in the brand voice, ready for agent review.", []string{"Draft a reply apologizing for the delayed refund"}, []string{modePlain, modeHTML}, []string{modePlain, modeHTML}, []string{"email", "drafting"}},
			{"refund-eligibility", "Refund eligibility check", "Checks an order against the refund policy and explains whether a refund is allowed.", []string{"Can order 55120 be refunded?"}, jsonOnly, jsonOnly, []string{"refunds", "orders"}},
			{"sentiment", "Conversation sentiment", "Scores sentiment and escalation risk across a support conversation.", []string{"How frustrated is this customer?"}, jsonText, jsonOnly, []string{"sentiment", "csat"}},
		},
	},
	{
		key: "code", weight: 0.07,
		titles: []string{"Code", "Dev", "Engineering", "Repo", "Software"},
		blurbs: []string{"reviews pull requests and suggests fixes", "writes and explains code in Python, Go and TypeScript", "generates unit tests for existing code", "answers questions about your repositories"},
		tags:   []string{"code", "developer-tools", "python", "go", "typescript", "code-review", "testing", "git", "refactoring"},
		nouns:  []string{"code", "repo", "pr", "test", "lint", "commit", "diff", "snippet", "build", "dependency"},
		skills: []skillTmpl{
			{"code-review", "Code review", "Reviews a diff for bugs, style issues and security problems and comments inline.", []string{"Review this pull request", "Any race conditions in this Go code?"}, []string{modePlain, "text/x-diff"}, mdText, []string{"code-review", "git"}},
			{"write-tests", "Unit test generation", "Generates unit tests for a Python, Go or TypeScript function, including edge cases.", []string{"Write table-driven tests for this Go function"}, textOnly, textOnly, []string{"testing", "unit-tests"}},
			{"explain-code", "Code explanation", "Explains what a snippet does, step by step, for a junior developer.", []string{"Explain this regex", "What does this SQL query do?"}, textOnly, mdText, []string{"code", "explanation"}},
			{"refactor", "Refactoring", "Refactors code for readability and performance while keeping behaviour unchanged.", []string{"Refactor this Python class into smaller functions"}, textOnly, textOnly, []string{"refactoring", "python"}},
			{"dependency-audit", "Dependency audit", "Lists outdated and vulnerable dependencies from a lockfile and proposes upgrades.", []string{"Audit this package-lock.json"}, jsonText, jsonOnly, []string{"dependencies", "security"}},
		},
	},
	{
		key: "finance", weight: 0.06,
		titles: []string{"Finance", "Treasury", "Accounting", "FP&A", "Ledger"},
		blurbs: []string{"reconciles accounts and explains variances", "prepares profit & loss statements and cash forecasts", "categorizes expenses and flags policy violations", "answers questions about financial statements"},
		tags:   []string{"finance", "accounting", "expenses", "reconciliation", "budgeting", "fintech", "ledger", "audit", "tax"},
		nouns:  []string{"expense", "ledger", "budget", "cashflow", "tax", "payment", "account", "statement", "variance", "loan"},
		skills: []skillTmpl{
			{"expense-categorize", "Expense categorization", "Categorizes expense lines and receipts against the chart of accounts and flags policy violations.", []string{"Categorize these 40 card transactions", "Is this dinner receipt within policy?"}, []string{modeCSV, modePDF, modeJPEG}, jsonOnly, []string{"expenses", "receipts"}},
			{"reconcile", "Bank reconciliation", "Matches bank statement lines with ledger entries and explains the unmatched ones.", []string{"Reconcile March bank statement"}, sheets, []string{modeJSON, modeXLSX}, []string{"reconciliation", "ledger"}},
			{"variance", "Budget variance analysis", "Explains budget vs actual variances by department with drivers.", []string{"Why is marketing 12% over budget?"}, sheets, mdText, []string{"budgeting", "fp-and-a"}},
			{"fraud-screen", "Transaction fraud screening", "Scores card transactions for fraud risk and explains each score.", []string{"Score this batch of transactions for fraud"}, jsonOnly, jsonOnly, []string{"fraud", "risk"}},
			{"mortgage-calc", "Mortgage and loan calculator", "Computes mortgage and loan schedules, APR and total interest.", []string{"Monthly payment for a 300k mortgage at 4.1% over 25 years"}, textOnly, jsonText, []string{"loans", "mortgage"}},
		},
	},
	{
		key: "retail", weight: 0.05,
		titles: []string{"Retail", "Shopping", "Commerce", "Store", "Merchandising"},
		blurbs: []string{"recommends products from your catalog", "keeps inventory and pricing in sync across channels", "writes product descriptions that convert", "answers shopper questions about orders and stock"},
		tags:   []string{"ecommerce", "retail", "products", "inventory", "pricing", "recommendations", "shopify", "catalog", "orders"},
		nouns:  []string{"product", "sku", "cart", "order", "price", "catalog", "stock", "promo", "shopper", "store"},
		skills: []skillTmpl{
			{"product-recommend", "Product recommendations", "Recommends products for a shopper from browsing history and the live catalog.", []string{"Suggest running shoes under 120 EUR"}, jsonText, jsonOnly, []string{"recommendations", "products"}},
			{"inventory-check", "Inventory lookup", "Checks stock levels per store and warehouse and predicts stock-outs.", []string{"Is SKU 88412 in stock in Berlin?"}, jsonText, jsonOnly, []string{"inventory", "stock"}},
			{"product-copy", "Product description writer", "Writes SEO-friendly product descriptions from attributes and photos.", []string{"Write a description for this linen shirt"}, []string{modeJSON, modeJPEG, modePNG}, []string{modeHTML, modePlain}, []string{"copywriting", "seo"}},
			{"price-optimize", "Price optimization", "Suggests prices from demand, competitor prices and margin targets.", []string{"Optimal price for our winter jacket line"}, sheets, jsonOnly, []string{"pricing", "optimization"}},
			{"order-status", "Order status", "Tells a shopper where their order is and when it will arrive.", []string{"Where is order 1002931?"}, textOnly, textOnly, []string{"orders", "tracking"}},
		},
	},
	{
		key: "marketing", weight: 0.05,
		titles: []string{"Marketing", "Growth", "Campaign", "Content", "Brand"},
		blurbs: []string{"plans campaigns and writes on-brand copy", "audits pages for SEO and suggests improvements", "segments audiences and personalizes email", "summarizes social media mentions of your brand"},
		tags:   []string{"marketing", "seo", "content", "social-media", "email-marketing", "copywriting", "ads", "campaigns", "brand"},
		nouns:  []string{"campaign", "keyword", "audience", "ad", "newsletter", "post", "landing-page", "lead", "brand", "persona"},
		skills: []skillTmpl{
			{"seo-audit", "SEO audit", "Audits a web page for SEO issues and proposes titles, meta descriptions and keywords.", []string{"Audit https://example.com/pricing for SEO"}, []string{modeHTML, modePlain}, mdText, []string{"seo", "audit"}},
			{"campaign-plan", "Campaign planner", "Plans a multi-channel campaign with budget split, timeline and KPIs.", []string{"Plan a product launch campaign for Q3"}, textOnly, []string{modeMarkdown, modeXLSX}, []string{"campaigns", "planning"}},
			{"social-listen", "Social listening", "Summarizes brand mentions and sentiment across social media.", []string{"What are people saying about our new app?"}, jsonText, mdText, []string{"social-media", "sentiment"}},
			{"email-personalize", "Email personalization", "Writes personalized email variants for each audience segment.", []string{"Write 3 subject lines for the spring sale"}, jsonText, []string{modeHTML, modePlain}, []string{"email-marketing", "personalization"}},
			{"ad-copy", "Ad copy generator", "Generates ad headlines and descriptions within platform character limits.", []string{"Ad copy for a B2B invoicing tool"}, textOnly, jsonText, []string{"ads", "copywriting"}},
		},
	},
	{
		key: "devops", weight: 0.04,
		titles: []string{"DevOps", "SRE", "Platform", "Cloud Ops", "Infra"},
		blurbs: []string{"diagnoses incidents in Kubernetes clusters", "writes Terraform and Helm changes from a description", "summarizes alerts and on-call pages", "explains cloud costs and proposes savings"},
		tags:   []string{"devops", "kubernetes", "sre", "cloud", "terraform", "incident-response", "observability", "aws", "ci-cd"},
		nouns:  []string{"cluster", "pod", "deploy", "alert", "incident", "pipeline", "cost", "log", "terraform", "helm"},
		skills: []skillTmpl{
			{"k8s-diagnose", "Kubernetes troubleshooting", "Diagnoses failing pods and deployments in a Kubernetes cluster from events and logs.", []string{"Why is my pod in CrashLoopBackOff?", "Check the payments deployment"}, jsonText, mdText, []string{"kubernetes", "troubleshooting"}},
			{"iac-writer", "Infrastructure as code", "Writes Terraform modules and Helm values from a plain-language description.", []string{"Terraform for an S3 bucket with versioning"}, textOnly, textOnly, []string{"terraform", "helm"}},
			{"incident-summary", "Incident summary", "Summarizes an incident timeline from alerts, chat and logs into a postmortem draft.", []string{"Draft the postmortem for INC-4411"}, jsonText, mdText, []string{"incident-response", "postmortem"}},
			{"cloud-cost", "Cloud cost analysis", "Breaks down AWS, GCP and Azure bills and proposes savings.", []string{"Where can we save on EC2 this month?"}, sheets, mdText, []string{"finops", "cloud"}},
			{"log-search", "Log search", "Searches and clusters logs to find the root cause of errors.", []string{"Find errors in checkout logs since 09:00"}, jsonText, jsonOnly, []string{"logs", "observability"}},
		},
	},
	{
		key: "travel", weight: 0.04,
		titles: []string{"Travel", "Trip", "Booking", "Itinerary", "Journey"},
		blurbs: []string{"books flights and hotels within travel policy", "plans multi-city itineraries", "rebooks disrupted trips automatically", "answers questions about visas and travel rules"},
		tags:   []string{"travel", "flights", "hotels", "booking", "itinerary", "expenses", "visas", "airlines", "corporate-travel"},
		nouns:  []string{"flight", "hotel", "trip", "fare", "seat", "visa", "itinerary", "airport", "rail", "car-rental"},
		skills: []skillTmpl{
			{"flight-search", "Flight search", "Searches flights by price, duration and travel policy and holds the best fares.", []string{"Cheapest flight from Paris to Lisbon next Friday", "Business class to Tokyo in May"}, textOnly, jsonOnly, []string{"flights", "booking"}},
			{"hotel-booking", "Hotel booking", "Finds and books hotels near a meeting location within the nightly budget.", []string{"Hotel near the Madrid office for 3 nights"}, textOnly, jsonOnly, []string{"hotels", "booking"}},
			{"itinerary", "Itinerary planner", "Plans a day-by-day itinerary with transport, hotel and meeting times.", []string{"Plan 4 days in Kyoto for a family"}, textOnly, mdText, []string{"itinerary", "planning"}},
			{"rebooking", "Disruption rebooking", "Rebooks cancelled or delayed flights and notifies the traveller.", []string{"My flight LH123 was cancelled, rebook me"}, jsonText, jsonOnly, []string{"rebooking", "airlines"}},
			{"visa-check", "Visa requirements", "Checks visa and entry requirements for a passport and destination.", []string{"Do I need a visa for India with a Canadian passport?"}, textOnly, textOnly, []string{"visas", "compliance"}},
		},
	},
	{
		key: "hr", weight: 0.04,
		titles: []string{"HR", "People", "Talent", "Recruiting", "Workforce"},
		blurbs: []string{"screens resumes against job descriptions", "answers employee questions about policies and benefits", "schedules interviews across calendars", "drafts job descriptions and offer letters"},
		tags:   []string{"hr", "recruiting", "hiring", "resumes", "onboarding", "payroll", "benefits", "talent", "interviews"},
		nouns:  []string{"resume", "candidate", "job", "interview", "offer", "employee", "payroll", "leave", "benefit", "onboarding"},
		skills: []skillTmpl{
			{"resume-screen", "Resume screening", "Scores resumes and CVs against a job description and explains the match for each of the candidates.", []string{"Screen these 30 resumes for the data engineer role"}, []string{modePDF, "application/msword", modePlain}, jsonOnly, []string{"resumes", "screening"}},
			{"policy-qa", "HR policy Q&A", "Answers employee questions about leave, benefits and payroll from the handbook.", []string{"How many vacation days do I have left?", "When is payroll this month?"}, textOnly, textOnly, []string{"policies", "benefits"}},
			{"interview-schedule", "Interview scheduling", "Finds slots across interviewer calendars and sends invitations to candidates.", []string{"Schedule a panel interview next week"}, jsonText, jsonOnly, []string{"interviews", "scheduling"}},
			{"job-description", "Job description writer", "Writes inclusive job descriptions from a role summary.", []string{"Job description for a senior backend engineer"}, textOnly, mdText, []string{"job-descriptions", "writing"}},
			{"onboarding-plan", "Onboarding plan", "Builds a 30-60-90 day onboarding plan for a new hire.", []string{"Onboarding plan for a new account executive"}, textOnly, mdText, []string{"onboarding", "planning"}},
		},
	},
	{
		key: "legal", weight: 0.04,
		titles: []string{"Legal", "Contract", "Counsel", "Compliance", "Clause"},
		blurbs: []string{"reviews contracts and highlights risky clauses", "summarizes legal documents in plain language", "checks documents for GDPR and privacy compliance", "compares contract versions and explains the changes"},
		tags:   []string{"legal", "contracts", "compliance", "gdpr", "privacy", "legal-tech", "clauses", "nda", "regulatory"},
		nouns:  []string{"contract", "clause", "nda", "policy", "regulation", "case", "filing", "privacy", "obligation", "redline"},
		skills: []skillTmpl{
			{"contract-review", "Contract review", "Reviews contracts and flags risky clauses against your playbook.", []string{"Review this NDA", "Flag unusual indemnity clauses in the MSA"}, []string{modePDF, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}, jsonOnly, []string{"contracts", "review"}},
			{"legal-summary", "Legal summary", "Summarizes a legal document in plain language with key dates and obligations.", []string{"Summarize this lease agreement"}, []string{modePDF, modePlain}, mdText, []string{"summarization", "legal"}},
			{"gdpr-check", "GDPR compliance check", "Checks a privacy policy or data flow description for GDPR compliance gaps.", []string{"Is our cookie banner GDPR compliant?"}, []string{modeHTML, modePlain, modePDF}, mdText, []string{"gdpr", "privacy"}},
			{"redline-compare", "Contract comparison", "Compares two versions of a contract and explains every change.", []string{"What changed between v3 and v4 of the contract?"}, []string{modePDF}, []string{modeHTML, modeJSON}, []string{"redline", "contracts"}},
			{"clause-search", "Clause search", "Searches your contract repository for clauses by meaning.", []string{"Find all contracts with auto-renewal clauses"}, textOnly, jsonOnly, []string{"clauses", "search"}},
		},
	},
	{
		key: "health", weight: 0.04,
		titles: []string{"Health", "Clinical", "Care", "Medical", "Patient"},
		blurbs: []string{"summarizes patient records for clinicians", "codes clinical notes with ICD-10 codes", "answers patient questions about appointments", "checks drug interactions"},
		tags:   []string{"healthcare", "clinical", "patients", "medical", "ehr", "fhir", "hipaa", "icd-10", "pharmacy"},
		nouns:  []string{"patient", "clinical-note", "ehr", "diagnosis", "prescription", "appointment", "lab", "claim", "drug", "triage"},
		skills: []skillTmpl{
			{"note-summary", "Clinical note summary", "Summarizes clinical notes and patient history into a handover summary.", []string{"Summarize the last 3 visits for this patient"}, []string{modePlain, "application/fhir+json"}, mdText, []string{"clinical", "summarization"}},
			{"icd-coding", "ICD-10 coding", "Suggests ICD-10 and CPT codes for a clinical note with rationale.", []string{"Code this discharge summary"}, textOnly, jsonOnly, []string{"icd-10", "medical-coding"}},
			{"appointment", "Appointment assistant", "Books, moves and cancels patient appointments.", []string{"Move my appointment to Thursday"}, textOnly, textOnly, []string{"appointments", "scheduling"}},
			{"drug-interactions", "Drug interaction check", "Checks a medication list for interactions and contraindications.", []string{"Can ibuprofen be taken with warfarin?"}, jsonText, jsonOnly, []string{"pharmacy", "drugs"}},
			{"imaging-report", "Radiology report drafting", "Drafts a structured radiology report from findings and DICOM images.", []string{"Draft the report for this chest X-ray"}, []string{"application/dicom", modePNG}, mdText, []string{"radiology", "imaging"}},
		},
	},
	{
		key: "security", weight: 0.04,
		titles: []string{"Security", "SecOps", "Threat", "Cyber", "SOC"},
		blurbs: []string{"triages security alerts and phishing reports", "scans code and infrastructure for vulnerabilities", "maps findings to MITRE ATT&CK techniques", "answers security questionnaires"},
		tags:   []string{"security", "cybersecurity", "soc", "vulnerability", "phishing", "threat-intel", "siem", "appsec", "iam"},
		nouns:  []string{"alert", "cve", "threat", "phishing", "vuln", "identity", "access", "malware", "siem", "questionnaire"},
		skills: []skillTmpl{
			{"phishing-triage", "Phishing triage", "Analyzes a reported email for phishing indicators and recommends an action.", []string{"Is this email phishing?"}, []string{"message/rfc822", modePlain}, jsonOnly, []string{"phishing", "email"}},
			{"vuln-scan", "Vulnerability scan summary", "Summarizes vulnerability scanner output and prioritizes CVEs by exploitability.", []string{"Prioritize the CVEs from last night's scan"}, []string{modeJSON, modeXML, modeCSV}, mdText, []string{"vulnerability", "cve"}},
			{"alert-triage", "SIEM alert triage", "Enriches SIEM alerts with threat intel and decides whether to escalate.", []string{"Triage alert 99812"}, jsonOnly, jsonOnly, []string{"siem", "triage"}},
			{"questionnaire", "Security questionnaire", "Answers vendor security questionnaires from your policies and past answers.", []string{"Fill in this SIG Lite questionnaire"}, []string{modeXLSX, modePDF}, []string{modeXLSX, modeJSON}, []string{"questionnaires", "compliance"}},
			{"access-review", "Access review", "Reviews IAM roles and group memberships for excessive privileges.", []string{"Who has admin access to production?"}, jsonOnly, jsonOnly, []string{"iam", "access-review"}},
		},
	},
	{
		key: "images", weight: 0.04,
		titles: []string{"Image", "Vision", "Photo", "Design", "Visual"},
		blurbs: []string{"generates and edits images from text prompts", "describes and tags images for accessibility", "removes backgrounds and resizes product photos", "detects objects and text in images"},
		tags:   []string{"images", "computer-vision", "image-generation", "photo-editing", "object-detection", "alt-text", "design", "vision", "ocr"},
		nouns:  []string{"image", "photo", "logo", "thumbnail", "background", "object", "caption", "banner", "icon", "scene"},
		skills: []skillTmpl{
			{"image-generate", "Image generation", "Generates images from a text prompt in several styles and aspect ratios.", []string{"A watercolor fox in the snow", "Product shot of a blue sneaker on white"}, textOnly, images, []string{"image-generation", "art"}},
			{"alt-text", "Alt text", "Describes an image for screen readers and suggests tags.", []string{"Describe this photo for alt text"}, images, textOnly, []string{"alt-text", "accessibility"}},
			{"background-remove", "Background removal", "Removes or replaces the background of product photos.", []string{"Remove the background from these 20 images"}, images, []string{modePNG, modeWebP}, []string{"photo-editing", "ecommerce"}},
			{"object-detect", "Object detection", "Detects and labels objects in an image with bounding boxes.", []string{"Count the cars in this image"}, images, jsonOnly, []string{"object-detection", "vision"}},
			{"video-thumbnail", "Video thumbnails", "Extracts the best frames from a video as thumbnails.", []string{"Pick 3 thumbnails from this clip"}, []string{modeMP4}, []string{modeJPEG, modePNG}, []string{"video", "thumbnails"}},
		},
	},
	{
		key: "logistics", weight: 0.04,
		titles: []string{"Logistics", "Shipping", "Freight", "Fleet", "Supply Chain"},
		blurbs: []string{"tracks shipments across carriers", "optimizes delivery routes for fleets", "prepares customs documents for cross-border shipments", "forecasts supply chain delays"},
		tags:   []string{"logistics", "shipping", "supply-chain", "freight", "tracking", "customs", "warehouse", "routing", "fleet"},
		nouns:  []string{"shipment", "parcel", "route", "carrier", "pallet", "customs", "warehouse", "container", "delivery", "port"},
		skills: []skillTmpl{
			{"shipment-track", "Shipment tracking", "Tracks a shipment across carriers and predicts the delivery date.", []string{"Where is container MSCU 1234567?", "Track parcel 1Z999AA10123456784"}, textOnly, jsonOnly, []string{"tracking", "shipping"}},
			{"route-optimize", "Route optimization", "Plans delivery routes for a fleet with time windows and capacities.", []string{"Plan routes for 12 vans and 340 stops"}, []string{modeCSV, modeJSON}, jsonOnly, []string{"routing", "fleet"}},
			{"customs-docs", "Customs documentation", "Prepares customs declarations and commercial invoices with HS codes.", []string{"Customs declaration for 200 laptops to Switzerland"}, jsonText, []string{modePDF, modeJSON}, []string{"customs", "trade"}},
			{"delay-forecast", "Delay forecast", "Forecasts supply chain delays from port congestion and weather.", []string{"Will my shipment from Shanghai be late?"}, jsonOnly, jsonOnly, []string{"forecasting", "supply-chain"}},
			{"warehouse-slotting", "Warehouse slotting", "Suggests slotting for warehouse inventory to reduce picking time.", []string{"Re-slot the fast movers in warehouse B"}, sheets, []string{modeXLSX, modeJSON}, []string{"warehouse", "inventory"}},
		},
	},
	{
		key: "education", weight: 0.04,
		titles: []string{"Tutor", "Learning", "Course", "Study", "Classroom"},
		blurbs: []string{"tutors students step by step in math and science", "creates quizzes and flashcards from course material", "grades essays with rubric-based feedback", "builds lesson plans for teachers"},
		tags:   []string{"education", "edtech", "tutoring", "quizzes", "grading", "courses", "students", "teachers", "learning"},
		nouns:  []string{"lesson", "quiz", "flashcard", "essay", "course", "student", "rubric", "exam", "homework", "curriculum"},
		skills: []skillTmpl{
			{"tutor", "Step-by-step tutor", "Explains math and science problems step by step without giving away the answer.", []string{"Help me solve 3x + 7 = 22", "Explain photosynthesis simply"}, []string{modePlain, modePNG}, mdText, []string{"tutoring", "math"}},
			{"quiz-maker", "Quiz generator", "Creates a quiz and flashcards from lecture notes or a textbook chapter.", []string{"Make a 10-question quiz from chapter 4"}, []string{modePDF, modePlain}, jsonOnly, []string{"quizzes", "flashcards"}},
			{"essay-grade", "Essay grading", "Grades essays against a rubric and writes feedback for the student.", []string{"Grade this essay on climate policy"}, []string{modePlain, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}, jsonText, []string{"grading", "feedback"}},
			{"lesson-plan", "Lesson planner", "Builds a lesson plan with objectives, activities and assessment.", []string{"45-minute lesson on fractions for grade 5"}, textOnly, mdText, []string{"lesson-plans", "teachers"}},
			{"course-search", "Course search", "Finds courses matching a learner's goals and level.", []string{"Beginner Python courses under 10 hours"}, textOnly, jsonOnly, []string{"courses", "search"}},
		},
	},
	{
		key: "invoices", weight: 0.035,
		titles: []string{"Invoice", "Accounts Payable", "Billing", "AP", "Receivables"},
		blurbs: []string{"extracts data from invoices and receipts", "matches invoices to purchase orders", "chases overdue invoices politely", "validates e-invoices against tax rules"},
		tags:   []string{"invoices", "accounts-payable", "billing", "receipts", "ocr", "e-invoicing", "purchase-orders", "finance", "payments"},
		nouns:  []string{"invoice", "receipt", "purchase-order", "vendor", "remittance", "dunning", "vat", "e-invoice", "billing", "payable"},
		skills: []skillTmpl{
			{"invoice-extract", "Invoice data extraction", "Extracts vendor, totals, tax and line items from a PDF invoice or scanned image.", []string{"Extract the line items from this invoice", "What is the total due on invoice INV-2291?"}, pdfOrImage, jsonOnly, []string{"ocr", "extraction"}},
			{"po-match", "Three-way match", "Matches an invoice to its purchase order and goods receipt and explains discrepancies.", []string{"Match invoice 8812 to its PO"}, []string{modePDF, modeJSON}, jsonOnly, []string{"purchase-orders", "matching"}},
			{"dunning", "Overdue invoice follow-up", "Writes polite reminders for overdue invoices and proposes payment plans.", []string{"Draft a reminder for invoices over 30 days late"}, jsonOnly, []string{modePlain, modeHTML}, []string{"dunning", "receivables"}},
			{"einvoice-validate", "E-invoice validation", "Validates XRechnung, Peppol and Factur-X e-invoices against schema and VAT rules.", []string{"Validate this Peppol invoice"}, []string{modeXML, modePDF}, jsonOnly, []string{"e-invoicing", "vat"}},
			{"receipt-scan", "Receipt scanning", "Reads receipts from photos and creates expense entries.", []string{"Scan these taxi receipts"}, images, jsonOnly, []string{"receipts", "expenses"}},
		},
	},
	{
		key: "translation", weight: 0.035,
		titles: []string{"Translation", "Localization", "Language", "Lingo", "Polyglot"},
		blurbs: []string{"translates documents between 40 languages", "localizes apps and websites", "translate chat messages in real time", "checks translations for terminology and tone"},
		tags:   []string{"translation", "localization", "languages", "i18n", "multilingual", "machine-translation", "l10n", "glossary", "subtitles"},
		nouns:  []string{"translation", "locale", "glossary", "subtitle", "string", "terminology", "language", "dialect", "tone", "transcreation"},
		skills: []skillTmpl{
			{"translate-text", "Text translation", "Translate text between 40 languages while keeping formatting and glossary terms.", []string{"Translate 'Guten Morgen, wie geht's?' to English", "Traduce este párrafo al francés"}, []string{modePlain, modeText}, []string{modePlain, modeText}, []string{"translation", "languages"}},
			{"translate-document", "Document translation", "Translates PDF and Word documents and returns the same layout.", []string{"Translate this contract into Japanese"}, []string{modePDF, "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}, []string{modePDF}, []string{"translation", "documents"}},
			{"localize-app", "App localization", "Localizes app strings and resource files with plural rules per locale.", []string{"Localize these strings into pt-BR"}, []string{modeJSON, modeXML}, []string{modeJSON, modeXML}, []string{"localization", "i18n"}},
			{"subtitles", "Subtitle translation", "Translates and times subtitles for video.", []string{"Spanish subtitles for this webinar"}, []string{"text/vtt", modeMP4}, []string{"text/vtt"}, []string{"subtitles", "video"}},
			{"terminology-qa", "Translation QA", "Checks a translation for terminology, tone and missing segments.", []string{"QA this French translation against our glossary"}, jsonText, jsonOnly, []string{"glossary", "qa"}},
		},
	},
	{
		key: "audio", weight: 0.035,
		titles: []string{"Voice", "Audio", "Speech", "Podcast", "Call"},
		blurbs: []string{"transcribe calls and meetings with speaker labels", "turns text into natural speech", "summarizes podcasts and call recordings", "detects keywords in live audio"},
		tags:   []string{"audio", "speech-to-text", "transcription", "text-to-speech", "voice", "meetings", "podcasts", "call-center", "speech"},
		nouns:  []string{"transcript", "speaker", "voice", "call", "meeting", "podcast", "audio-clip", "keyword", "accent", "caption"},
		skills: []skillTmpl{
			{"transcribe", "Speech transcription", "Transcribe audio recordings with speaker labels and timestamps.", []string{"Transcribe this customer call", "Transcript of the board meeting recording"}, audio, []string{modePlain, modeJSON, "text/vtt"}, []string{"transcription", "speech-to-text"}},
			{"tts", "Text to speech", "Turns text into natural speech in 30 voices.", []string{"Read this paragraph in a calm British voice"}, textOnly, audio, []string{"text-to-speech", "voice"}},
			{"meeting-notes", "Meeting notes", "Summarizes a meeting recording into decisions and action items.", []string{"Action items from today's standup"}, []string{modeWAV, modeMPEG, modeMP4}, mdText, []string{"meetings", "summarization"}},
			{"call-analytics", "Call analytics", "Scores sales and support calls for talk ratio, sentiment and script adherence.", []string{"Score yesterday's 50 sales calls"}, audio, jsonOnly, []string{"call-center", "analytics"}},
			{"podcast-summary", "Podcast summary", "Summarizes a podcast episode with chapters and quotes.", []string{"Summarize this 2-hour episode"}, []string{modeMPEG}, mdText, []string{"podcasts", "summarization"}},
		},
	},
	{
		key: "sales", weight: 0.06,
		titles: []string{"Sales", "CRM", "Revenue", "Pipeline", "Deal"},
		blurbs: []string{"qualifies leads and updates the CRM", "writes follow-up emails after sales calls", "scores deals and predicts close dates", "researches accounts before meetings"},
		tags:   []string{"sales", "crm", "leads", "salesforce", "hubspot", "pipeline", "prospecting", "deals", "revops"},
		nouns:  []string{"lead", "deal", "account", "opportunity", "quote", "territory", "contact", "meeting", "pipeline", "forecast-call"},
		skills: []skillTmpl{
			{"lead-qualify", "Lead qualification", "Qualifies inbound leads with BANT questions and updates the CRM record.", []string{"Qualify the leads from yesterday's webinar"}, jsonText, jsonOnly, []string{"leads", "crm"}},
			{"account-research", "Account research", "Researches a company before a meeting: news, org chart and likely priorities.", []string{"Brief me on Globex before tomorrow's call"}, textOnly, mdText, []string{"prospecting", "research"}},
			{"deal-score", "Deal scoring", "Scores open opportunities and predicts close dates from activity history.", []string{"Which deals will close this quarter?"}, jsonOnly, jsonOnly, []string{"deals", "pipeline"}},
			{"follow-up", "Follow-up writer", "Writes a follow-up email from call notes with next steps.", []string{"Follow-up for the Initech demo"}, textOnly, []string{modePlain, modeHTML}, []string{"email", "sales"}},
			{"quote-builder", "Quote builder", "Builds a price quote from the product catalog and discount rules.", []string{"Quote 250 seats with a 3-year term"}, jsonText, []string{modePDF, modeJSON}, []string{"quotes", "cpq"}},
		},
	},
	{
		key: "insurance", weight: 0.04,
		titles: []string{"Claims", "Insurance", "Underwriting", "Policy", "Cover"},
		blurbs: []string{"processes insurance claims from first notice to payout", "assists underwriters with risk assessment", "answers policyholder questions about cover", "detects suspicious claims"},
		tags:   []string{"insurance", "claims", "underwriting", "insurtech", "policyholders", "risk", "actuarial", "fnol", "coverage"},
		nouns:  []string{"claim", "policy", "premium", "underwriting", "coverage", "adjuster", "loss", "risk-score", "renewal", "broker"},
		skills: []skillTmpl{
			{"claim-intake", "Claim intake", "Captures first notice of loss from photos, forms and chat and opens a claim.", []string{"I had a car accident this morning", "Open a claim for water damage"}, []string{modePlain, modeJPEG, modePNG}, jsonOnly, []string{"claims", "fnol"}},
			{"underwrite", "Underwriting assistant", "Summarizes submissions and scores risk against underwriting guidelines.", []string{"Assess this commercial property submission"}, []string{modePDF, modeJSON}, jsonOnly, []string{"underwriting", "risk"}},
			{"coverage-qa", "Coverage questions", "Answers policyholder questions about what their policy covers.", []string{"Am I covered for a stolen bike?"}, textOnly, textOnly, []string{"coverage", "policyholders"}},
			{"claim-fraud", "Claim fraud detection", "Flags claims with fraud indicators and explains the evidence.", []string{"Check claim 77120 for fraud"}, jsonOnly, jsonOnly, []string{"fraud", "claims"}},
			{"renewal-quote", "Renewal pricing", "Proposes renewal premiums from loss history and market rates.", []string{"Renewal premium for policy P-88231"}, jsonOnly, jsonText, []string{"pricing", "renewals"}},
		},
	},
	{
		key: "research", weight: 0.04,
		titles: []string{"Research", "Scholar", "Literature", "Science", "Lab"},
		blurbs: []string{"searches and summarizes scientific papers", "extracts results tables from publications", "drafts literature reviews with citations", "answers questions over lab notebooks"},
		tags:   []string{"research", "science", "papers", "literature-review", "citations", "arxiv", "pubmed", "academia", "datasets"},
		nouns:  []string{"paper", "citation", "abstract", "dataset", "experiment", "hypothesis", "journal", "preprint", "protocol", "figure"},
		skills: []skillTmpl{
			{"paper-search", "Paper search", "Searches arXiv, PubMed and Semantic Scholar and ranks papers by relevance.", []string{"Recent papers on protein folding with diffusion models"}, textOnly, jsonOnly, []string{"papers", "search"}},
			{"paper-summary", "Paper summary", "Summarizes a paper's method, results and limitations from its full text.", []string{"Summarize this paper in 5 bullet points"}, []string{modePDF}, mdText, []string{"summarization", "papers"}},
			{"lit-review", "Literature review", "Drafts a literature review with citations in APA or BibTeX.", []string{"Literature review on microplastics in soil"}, textOnly, []string{modeMarkdown, "application/x-bibtex"}, []string{"literature-review", "citations"}},
			{"table-extract", "Results table extraction", "Extracts results tables and figures from publications as CSV.", []string{"Extract table 2 from this paper"}, []string{modePDF, modePNG}, []string{modeCSV, modeJSON}, []string{"extraction", "datasets"}},
			{"stats-check", "Statistics check", "Checks the statistical methods in a manuscript and flags common errors.", []string{"Are the p-values in this study corrected for multiple comparisons?"}, []string{modePDF, modePlain}, mdText, []string{"statistics", "peer-review"}},
		},
	},
	{
		key: "productivity", weight: 0.05,
		titles: []string{"Workspace", "Office", "Productivity", "Calendar", "Notes"},
		blurbs: []string{"manages calendars and schedules meetings", "summarizes long email threads", "turns notes into tasks and reminders", "finds files across drives and wikis"},
		tags:   []string{"productivity", "calendar", "tasks", "notes", "meetings", "office", "google-workspace", "microsoft-365", "reminders"},
		nouns:  []string{"calendar", "task", "note", "reminder", "thread", "file", "wiki", "agenda", "todo", "workspace"},
		skills: []skillTmpl{
			{"schedule-meeting", "Meeting scheduler", "Finds a time that works for everyone and sends the invitation.", []string{"Find 30 minutes with Ana and Raj next week"}, textOnly, jsonText, []string{"calendar", "scheduling"}},
			{"thread-summary", "Email thread summary", "Summarizes long email threads into decisions, open questions and owners.", []string{"Summarize the vendor negotiation thread"}, []string{"message/rfc822", modePlain}, mdText, []string{"email", "summarization"}},
			{"notes-to-tasks", "Notes to tasks", "Turns meeting notes into tasks with owners and due dates.", []string{"Create tasks from these notes"}, []string{modePlain, modeMarkdown}, jsonOnly, []string{"tasks", "notes"}},
			{"file-search", "File search", "Finds documents across drives, wikis and chat by meaning.", []string{"Find the latest pricing deck"}, textOnly, jsonOnly, []string{"search", "files"}},
			{"agenda", "Agenda builder", "Drafts a meeting agenda from the invite, past notes and open tasks.", []string{"Agenda for Monday's planning meeting"}, textOnly, mdText, []string{"meetings", "agenda"}},
		},
	},
}
