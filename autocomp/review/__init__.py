"""Human validation of a run (Auto-Comp Tables 10 and 17, appendix A.7): a local web page
shows a balanced, seeded sample; judgments go to RUN/review/judgments.jsonl (append-only,
one line each, several annotators by name); the report compares them with the automatic
validators ("validate" mode) or scores the humans as test takers ("test" mode)."""
