"""Registrations of Amazon Computers (Shchur et al.) and Credit defaulter (NIFTY)."""

from __future__ import annotations

from dpgnn.data.datasets.variants import (
    _privgnn_variant,
)
from dpgnn.data.download import RawFile
from dpgnn.data.registry import DatasetSpec, LazyFunction, register

# the loaders import torch: named here, imported when called
read_credit = LazyFunction("dpgnn.data.loaders.credit.read_credit")
read_gnn_benchmark_npz = LazyFunction("dpgnn.data.loaders.npz.read_gnn_benchmark_npz")

register(
    DatasetSpec(
        name="amazon-computers",
        title="Amazon Computers (Shchur et al.)",
        aliases=("computers", "amazon-computer"),
        doc="""Amazon co-purchase graph of computer products; features: bag-of-words of reviews; target: category.

Source: McAuley et al., SIGIR 2015; Shchur et al., "Pitfalls of Graph Neural Network Evaluation", 2018
(shchur/gnn-benchmark). Parsed like PyG's ``Amazon('Computers')``.
Statistics: 13,752 nodes, 245,861 undirected edges (491,722 directed), 767 binary features, 10 classes.
PrivGNN's "Amazon" (ProGAP's "amazon" is ogbn-products, see ``amazon``).""",
        papers=("privgnn",),
        raw_files=(
            RawFile(
                name="amazon_electronics_computers.npz",
                url="https://github.com/shchur/gnn-benchmark/raw/master/data/npz/amazon_electronics_computers.npz",
                # mirror copy (repacked, same arrays) and the public file (see the mirror MANIFEST)
                sha256=(
                    "8553eeb570349de56d0cfc21f24fa6cbff483ad63d72f55f106adb26063365ee",
                    "736ba1d9fd85eac2da83a5ad25c463f04b0031a6ca01563f90a7099d9e8ffb2c",
                ),
                mirror="amazon_computers/amazon_electronics_computers.npz",
                size=31921488,
            ),
        ),
        loader=lambda p: read_gnn_benchmark_npz(p["amazon_electronics_computers.npz"]),
        stats={"nodes": 13752, "edges": 245861, "features": 767, "classes": 10},
        variants={
            "privgnn": _privgnn_variant(
                "private 250 nodes/class (2,500), public 3,000 train + 3,000 test",
                private_per_class=250,
                num_public_train=3000,
                num_public_test=3000,
            )
        },
    )
)

NIFTY_URL = "https://raw.githubusercontent.com/chirag126/nifty/main/dataset/credit/{file}"
register(
    DatasetSpec(
        name="credit",
        title="Credit defaulter (NIFTY)",
        aliases=("credit-defaulter",),
        doc="""Credit card clients (Taiwan, 2005) linked by attribute similarity; target: no default next month.

Source: Yeh & Lien 2009; graph by Agarwal, Lakkaraju & Zitnik, "Towards a Unified Framework for Fair and Stable
Graph Representation Learning" (NIFTY), UAI 2021 (chirag126/nifty). Features: all columns except the label and
``Single`` (as NIFTY's loader); ``sensitive`` = Age.
Statistics: 30,000 nodes, 137,377 undirected edges (200,526 directed pairs), 13 features, 2 classes.""",
        papers=("privgnn",),
        raw_files=(
            RawFile(
                "credit.csv",
                NIFTY_URL.format(file="credit.csv"),
                ("5d7a93f25a09dd1648c78b5e0c6a883ca832ee88259d89dfe1062e8c848bfe5d",),
                "nifty_credit/credit.csv",
            ),
            # the mirror's zip is regenerated with the authors' rule (same edge set); the public zip's hash is unknown,
            # so a downloaded copy is checked against the hash recorded at its first download
            RawFile(
                "credit_edges.txt.zip",
                NIFTY_URL.format(file="credit_edges.txt.zip"),
                ("85aad74bd4c36271823dc45f7d64f4fd79ed91b4b771702b1a9d9bb0486b317c",),
                "nifty_credit/credit_edges.txt.zip",
            ),
        ),
        loader=lambda p: read_credit(p["credit.csv"], p["credit_edges.txt.zip"]),
        stats={"nodes": 30000, "edges": 137377, "features": 13, "classes": 2},
        note="The mirror's credit_edges.txt.zip is regenerated from credit.csv (same edge set as published).",
        variants={
            "privgnn": _privgnn_variant(
                "private 10,000 random nodes (paper text; Table: 10,818), public 7,500 train + 7,500 test",
                num_private=10_000,
                num_public_train=7500,
                num_public_test=7500,
            )
        },
    )
)
