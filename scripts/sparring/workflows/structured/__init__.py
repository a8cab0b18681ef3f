"""think-about and dual-model: structured rounds, Claude's verdicts, the ledger's decision."""
