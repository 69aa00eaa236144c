#!/usr/bin/env python3
"""blame.py's scoring on findings written by hand: what is right, partial and false, what a
culprit's status is, when a run is exact. Needs neither root nor a cluster."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blame  # noqa: E402


def culprit(kind, switch=None, node=-1):
    return {"kind": kind, "switch": switch, "node_a": node, "node_b": -1, "rank": -1, "both": False}


def finding(kind, subject, node_a=-1, node_b=-1, severity="warning"):
    return {"kind": kind, "subject": subject, "severity": severity, "node_a": node_a, "node_b": node_b, "rank": -1}


class Scoring(unittest.TestCase):
    def test_a_leafs_uplinks_are_its_cable(self):
        r = blame.score([culprit("uplink", "leaf03")],
                        [finding("uplink", "leaf03 port 9 -> spine00 port 4, port 10 -> spine01 port 4")])
        self.assertTrue(r["exact"])
        self.assertFalse(r["false_blame"])
        self.assertEqual(r["culprits"][0]["status"], "named")

    def test_spines_as_candidates_cover_the_slowed_one(self):
        r = blame.score([culprit("switch", "spine05")], [finding("switch", "one of 8 spines (spine00 .. spine07)")])
        self.assertEqual(r["findings"][0]["verdict"], "partial")
        self.assertEqual(r["culprits"][0]["status"], "covered")
        self.assertFalse(r["exact"])
        self.assertFalse(r["false_blame"])
        self.assertFalse(r["missed"])

    def test_candidates_without_the_slowed_one_are_false(self):
        r = blame.score([culprit("switch", "spine05")], [finding("switch", "one of 2 spines (spine06 .. spine07)")])
        self.assertEqual(r["findings"][0]["verdict"], "false")
        self.assertTrue(r["false_blame"])
        self.assertTrue(r["missed"])

    def test_a_leafs_uplinks_for_a_spine_are_false(self):
        r = blame.score([culprit("switch", "spine05")], [finding("uplink", "leaf00 port 9 -> spine00 port 1")])
        self.assertTrue(r["false_blame"])
        self.assertTrue(r["missed"])

    def test_an_innocent_link_is_false_blame_beside_the_right_node(self):
        r = blame.score([culprit("node", node=4)],
                        [finding("node", "n0004", node_a=4), finding("link", "n0001 -> n0002", node_a=1, node_b=2)])
        self.assertEqual([f["verdict"] for f in r["findings"]], ["right", "false"])
        self.assertTrue(r["false_blame"])
        self.assertFalse(r["exact"])


if __name__ == "__main__":
    unittest.main()
