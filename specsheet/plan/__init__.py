"""Questions asked of a model, one module per job: the parallel layout, the tensor cut, vLLM's KV
blocks, the serving plan, its roofline estimates, budgets and checks, the training plan."""

# the most layers a question that walks the layers one by one takes (a serving plan's stages, KV
# groups and tensors; an inspection's expected tensors): about 5 s for a serving plan at this
# many; the largest published model has 126. count answers any number (no list per layer).
MAX_WALKED_LAYERS = 10_000
