"""deep-discussion: free-text rounds with markers, a transcript, a synthesis."""
