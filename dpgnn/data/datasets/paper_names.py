"""WeNet (not public) and the dataset names that mean different graphs in different papers."""

from __future__ import annotations

from dpgnn.data.registry import DatasetSpec, Variant, register

register(
    DatasetSpec(
        name="wenet",
        title="WeNet (private mobile-sensing data)",
        doc="""WeNet: mobile-sensing data of university students (ProGAP Table 1: 37,576 nodes, 22,684,206 directed
edges, 44 features, 4 classes). Loaded by ProGAP's code from a local data.pt.""",
        papers=("progap",),
        public=False,
        stats={"nodes": 37576, "edges": None, "features": 44, "classes": 4},
        note="WeNet was never released publicly (ProGAP read it from a private local data.pt); its results cannot be "
        "reproduced and notebooks must report it as not_run.",
    )
)

register(
    DatasetSpec(
        name="facebook",
        title="'facebook' as each paper means it",
        doc="""The name "facebook" denotes different graphs in different papers; pick the paper's variant:
- lpgnn  -> facebook-pagepage (Karate Club Facebook page-page, 22,470 nodes, 4 classes), LPGNN preprocessing;
- progap -> fb100-uillinois20 (Facebook100 UIUC, year target, classes >= 1,000: 6 classes), ProGAP preprocessing;
- privgnn -> fb100-uillinois20 (the same UIUC graph, 34 year-classes, private/public halves).""",
        papers=("lpgnn", "progap", "privgnn"),
        require_variant=True,
        note="Ambiguous name: pass variant='lpgnn' (page-page), 'progap' or 'privgnn' (Facebook100 UIllinois20).",
        variants={
            "lpgnn": Variant(
                "lpgnn", ("lpgnn",), "facebook-pagepage, LPGNN pipeline", redirect=("facebook-pagepage", "lpgnn")
            ),
            "progap": Variant(
                "progap",
                ("progap",),
                "fb100-uillinois20, ProGAP preprocessing",
                redirect=("fb100-uillinois20", "progap"),
            ),
            "privgnn": Variant(
                "privgnn", ("privgnn",), "fb100-uillinois20, PrivGNN split", redirect=("fb100-uillinois20", "privgnn")
            ),
        },
    )
)

register(
    DatasetSpec(
        name="amazon",
        title="'amazon' as each paper means it",
        doc="""The name "amazon" denotes different graphs in different papers; pick the paper's variant:
- progap (and GAP) -> ogbn-products with classes >= 100,000 nodes (10 classes);
- privgnn -> amazon-computers (Shchur et al., 13,752 nodes, 10 classes). PrivGNN's Amazon2M is ``amazon2m``.""",
        papers=("progap", "privgnn"),
        require_variant=True,
        note="Ambiguous name: pass variant='progap' (ogbn-products, top classes) or 'privgnn' (Amazon Computers).",
        variants={
            "progap": Variant(
                "progap", ("progap",), "ogbn-products, ProGAP preprocessing", redirect=("ogbn-products", "progap")
            ),
            "gap": Variant(
                "gap",
                ("progap",),
                "ogbn-products, GAP preprocessing (same as ProGAP)",
                redirect=("ogbn-products", "progap"),
            ),
            "privgnn": Variant(
                "privgnn", ("privgnn",), "amazon-computers, PrivGNN split", redirect=("amazon-computers", "privgnn")
            ),
        },
    )
)

register(
    DatasetSpec(
        name="amazon2m",
        title="Amazon2M (PrivGNN) = ogbn-products, 47 classes",
        doc="PrivGNN's Amazon2M: ogbn-products with all 47 classes and PrivGNN's private/public split.",
        papers=("privgnn",),
        default_variant="privgnn",
        variants={
            "privgnn": Variant(
                "privgnn",
                ("privgnn",),
                "ogbn-products, PrivGNN split (all 47 classes)",
                redirect=("ogbn-products", "privgnn"),
            )
        },
    )
)
