"""Questions asked of a model: budgets now; serving and training plans later."""
