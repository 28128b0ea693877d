"""The course's explorers (``notebooks/learn/``): each returns figure data from a few slider values.

Every explorer is a pair: a *data* function (plain arguments in, a dict of numbers/arrays out -- what the tests
check) and a *draw* function (that dict in, a matplotlib figure out). :func:`explore` shows the default figure as a
normal output (so papermill, nbconvert and CI see a static figure) and, where ipywidgets is available, adds
sliders/dropdowns that redraw that same output in place in JupyterLab.

The numbers come from the package, never from the notebook: mechanisms (:mod:`dpgnn.privacy.mechanisms`,
:mod:`dpgnn.privacy.multibit`), accountants (:func:`dpgnn.privacy.get_accountant`, the ones behind
``dpgnn epsilon``), the PATE/PrivGNN accounting (:mod:`dpgnn.privacy.pate`), FDP's bound
(:mod:`dpgnn.privacy.fdp`), DRW's sampler (:mod:`dpgnn.data.random_walks`) and ProGAP's events
(:mod:`dpgnn.privacy.progap`). The one outside library is ``dp_accounting``'s PLD accountant (the tight
reference next to our RDP accountant).

One module per chapter of the course: :mod:`.ldp` (features and labels), :mod:`.accounting`, :mod:`.dpsgd`
(why DP-SGD breaks on graphs), :mod:`.aggregation` (GAP / ProGAP) and :mod:`.teachers` (PATE, PrivGNN);
:mod:`.explorer` holds :func:`explore` and the course's graph.
"""

from dpgnn.teach.accounting import draw_epsilon_vs_delta, draw_epsilon_vs_steps, epsilon_vs_delta, epsilon_vs_steps
from dpgnn.teach.aggregation import aggregation_noise, draw_aggregation_noise, draw_progap_budget, progap_budget
from dpgnn.teach.dpsgd import draw_node_influence, node_influence
from dpgnn.teach.explorer import course_graph, explore
from dpgnn.teach.ldp import (
    FEATURE_MECHANISMS,
    aggregation_error,
    draw_aggregation_error,
    draw_drop_accuracy,
    draw_ldp_draws,
    draw_ldp_variance,
    draw_rr_labels,
    drop_accuracy,
    ldp_draws,
    ldp_variance,
    rr_labels,
)
from dpgnn.teach.teachers import draw_query_cost, draw_teacher_votes, query_cost, teacher_votes

__all__ = [
    "FEATURE_MECHANISMS",
    "explore",
    "course_graph",
    "ldp_draws",
    "ldp_variance",
    "aggregation_error",
    "draw_ldp_draws",
    "draw_ldp_variance",
    "draw_aggregation_error",
    "rr_labels",
    "drop_accuracy",
    "draw_rr_labels",
    "draw_drop_accuracy",
    "epsilon_vs_steps",
    "epsilon_vs_delta",
    "draw_epsilon_vs_steps",
    "draw_epsilon_vs_delta",
    "node_influence",
    "draw_node_influence",
    "aggregation_noise",
    "progap_budget",
    "draw_aggregation_noise",
    "draw_progap_budget",
    "teacher_votes",
    "query_cost",
    "draw_teacher_votes",
    "draw_query_cost",
]
