-- The measured-savings arm of a session (treated | holdout), recorded at its first sight and never
-- changed: a Redis loss must not move a session to the other arm (a holdout session turned
-- treated mid-life, or the reverse, would mix both arms' bills). NULL: never recorded.
ALTER TABLE session_state ADD COLUMN arm text;
