"""The EP stack probe (config ``ep_stack``): EP's estimate against BPTT's on the
spring-coupled stack, over seeds and pretraining precisions. Here are its page and its
figure; its tables (analysis.ep_stack_tables) stay shared, as the claims' EP row and the
paper read them too."""
