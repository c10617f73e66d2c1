"""Questions asked of a model, one module per job: the parallel layout, the tensor cut, vLLM's KV
blocks, the serving plan, its roofline estimates, budgets and checks, the training plan."""
