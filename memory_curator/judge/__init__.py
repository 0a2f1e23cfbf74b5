"""The optional model: what it is shown and how its answer is read (`prompt`, pure) and the
batched, fail-open request (`client`)."""
