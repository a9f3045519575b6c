// BookpipePipeline: see DESIGN.md §3.
