"""`python -m infra cost`: the JSON contract, figures recomputed independently from Karpenter's upstream files,
offline provenance, region fallback, extended support, and `--live` through botocore's Stubber (no network)."""

from __future__ import annotations

import datetime as dt
import io
import json
import sys
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.catalogue.prices import region_prices
from eks_karpenter.platform.stack import load_stack_config
from eks_karpenter.tools.cli import main
from eks_karpenter.tools.cost import LivePrices, estimate, inputs_from_config, inputs_from_plan
from eks_karpenter.tools.cost import prices as P
from eks_karpenter.tools.cost.estimate import CostInputs, NodeGroup
from eks_karpenter.tools.cost.live import LiveError, fetch_live_prices, on_demand_filters
from eks_karpenter.tools.cost.report import diff_section, plan_section, render_markdown, render_text
from eks_karpenter.tools.engine.runner import read_flat_config

from tests.catalogue.test_catalogue import _naive_admits, _naive_types
from tests.support import REPO, STACKS, UPSTREAM, plan_stack, requires_upstream, upstream_file

AS_OF = dt.date(2026, 11, 23)
KEYS = ["region", "priceRegion", "priceSource", "priceDate", "priceFallback", "currency", "hoursPerMonth", "fixed",
        "perUnit", "pools", "warnings"]
POOL_KEYS = ["name", "admitted", "priced", "families", "capacityTypes", "arch", "cheapest", "usdPerVcpuHour",
             "cpuLimit", "monthlyAtCpuLimit", "fallbackPriced"]


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()

NODE_POOL_TYPE, NODE_CLASS_TYPE = "kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def cost_json(*argv: str) -> dict[str, Any]:
    code, out, err = run("cost", *argv, "--format", "json", "--as-of", AS_OF.isoformat())
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def config_of(stack: str) -> Any:
    flat = read_flat_config(REPO / "stacks" / f"Pulumi.{stack}.yaml", "eks-karpenter")
    return load_stack_config(flat, f"stacks/Pulumi.{stack}.yaml")


@pytest.mark.parametrize("stack", STACKS)
def test_cost_json_contract_for_every_stack(stack: str) -> None:
    doc = cost_json("--stack", stack)
    assert all(k in doc for k in KEYS)
    # Every shipped stack's region has a price table: its own prices, Karpenter's for us-east-1.
    assert (doc["currency"], doc["hoursPerMonth"], doc["priceRegion"]) == ("USD", 730, doc["region"])
    if doc["region"] == "us-east-1":
        assert doc["priceDate"] == "2026-07-06" and "Karpenter v1.14.1" in doc["priceSource"]
        assert doc["priceFallback"] is None
    else:
        assert doc["priceDate"] == "2025-03-02" and "Apache Libcloud 3.9.1" in doc["priceSource"]
        assert doc["priceFallback"]["region"] == "us-east-1"
    assert doc["pools"] and all(list(p)[:len(POOL_KEYS)] == POOL_KEYS for p in doc["pools"])
    for f in doc["fixed"]:
        assert set(f) == {"item", "quantity", "hourly", "monthly"}
        assert f["monthly"] == pytest.approx(f["hourly"] * 730, abs=0.01)
    for p in doc["pools"]:
        assert p["admitted"] > 0 and "liveSpot" not in p  # offline figures are never spot prices


# An independent computation: upstream's page and price file, the plan's rendered NodePools, plain arithmetic.
@pytest.mark.slow
@requires_upstream
@pytest.mark.parametrize("stack", STACKS)
def test_pool_figures_match_an_independent_computation_from_upstream_files(stack: str) -> None:
    naive = _naive_types()
    known = {k for t in naive for k in t}
    prices = json.loads((UPSTREAM / "karpenter" / "ondemand-prices.json").read_text())["us-east-1"]
    region = config_of(stack).region
    if region != "us-east-1":  # the rule: the region's Libcloud price (0.0 is none), else us-east-1's Karpenter price
        libcloud = json.loads(upstream_file("libcloud/pricing.json").read_text())["compute"]["ec2_linux"]
        prices = {**prices, **{t: by_region[region] for t, by_region in libcloud.items() if by_region.get(region)}}
    pools = {r.inputs["metadata"]["name"]: r.inputs for r in plan_stack(stack).by_type(
        "kubernetes:karpenter.sh/v1:NodePool")}
    doc = cost_json("--stack", stack)
    assert [p["name"] for p in doc["pools"]] == sorted(pools)
    for p in doc["pools"]:
        manifest = pools[p["name"]]
        reqs = manifest["spec"]["template"]["spec"]["requirements"]
        types = [t for t in naive if all(_naive_admits(t, r, known) for r in reqs)]
        priced = [t for t in types if t["node.kubernetes.io/instance-type"] in prices]
        per_vcpu = [prices[t["node.kubernetes.io/instance-type"]] / int(t["karpenter.k8s.aws/instance-cpu"])
                    for t in priced]
        cheapest = min(priced, key=lambda t: (prices[t["node.kubernetes.io/instance-type"]],
                                              t["node.kubernetes.io/instance-type"]))
        cpu = float(manifest["spec"]["limits"]["cpu"])
        assert p["admitted"] == len(types) and p["priced"] == len(priced)
        assert p["families"] == sorted({t["karpenter.k8s.aws/instance-family"] for t in types})
        assert p["arch"] == sorted({t["kubernetes.io/arch"] for t in types})
        assert {k: p["cheapest"][k] for k in ("type", "hourly")} == {
            "type": cheapest["node.kubernetes.io/instance-type"],
            "hourly": prices[cheapest["node.kubernetes.io/instance-type"]]}
        assert p["usdPerVcpuHour"]["min"] == pytest.approx(min(per_vcpu), abs=1e-6)
        assert p["usdPerVcpuHour"]["max"] == pytest.approx(max(per_vcpu), abs=1e-6)
        assert p["cpuLimit"] == cpu
        assert p["monthlyAtCpuLimit"]["min"] == pytest.approx(cpu * min(per_vcpu) * 730, abs=0.01)
        assert p["monthlyAtCpuLimit"]["max"] == pytest.approx(cpu * max(per_vcpu) * 730, abs=0.01)


@requires_upstream
def test_prod_fixed_costs_match_an_independent_computation() -> None:
    prices = json.loads((UPSTREAM / "karpenter" / "ondemand-prices.json").read_text())["us-east-1"]
    doc = cost_json("--stack", "prod")
    monthly = {f["item"].split(" (")[0].split(":")[0]: f["monthly"] for f in doc["fixed"]}
    assert monthly["EKS control plane"] == 73.0  # 1.35 is in standard support until 2027-03-27
    assert monthly["NAT gateway"] == pytest.approx(3 * 0.045 * 730)
    assert monthly["public IPv4 address"] == pytest.approx(3 * 0.005 * 730)
    system = [f for f in doc["fixed"] if f["item"].startswith("node group system: m7i.xlarge")]
    assert system[0]["monthly"] == pytest.approx(3 * prices["m7i.xlarge"] * 730, abs=0.01)
    assert monthly["KMS key"] == 1.0
    assert doc["fixedMonthly"] == pytest.approx(sum(f["monthly"] for f in doc["fixed"]), abs=0.01)
    assert doc["warnings"] == []  # us-east-1: its own price table


@pytest.mark.slow
def test_config_and_plan_give_the_same_estimate() -> None:
    for stack in STACKS:
        from_config = estimate(inputs_from_config(config_of(stack)), AS_OF)
        from_plan = estimate(inputs_from_plan(plan_stack(stack).resources, config_of(stack).region), AS_OF)
        assert from_plan == from_config, stack


@pytest.mark.slow
def test_dev_prices_its_spot_group_and_the_launch_template_volumes() -> None:
    # By hand (fixed prices us-east-1's; instances eu-west-1's): control plane 0.10 x 730 = 73.00; one NAT gateway
    # 0.045 x 730 = 32.85 and its address 0.005 x 730 = 3.65; system 2 x m7i.large, which has no eu-west-1 price in
    # the regional table, so us-east-1's 0.1008 x 730 = 147.17, and 2 x 50 GiB gp3 x 0.08 = 8.00; workshop-spot 1
    # node at its dearest type's eu-west-1 on-demand price (m5n.large 0.133 x 730 = 97.09) and its 20 GiB gp3
    # volume 1.60.
    for inputs in (inputs_from_config(config_of("dev")), inputs_from_plan(plan_stack("dev").resources, "eu-west-1")):
        doc = estimate(inputs, AS_OF)
        monthly = {f["item"]: f["monthly"] for f in doc["fixed"]}
        assert monthly["node group workshop-spot: m5.large (spot, at the on-demand price: a ceiling)"] == 97.09
        assert monthly["node group workshop-spot: gp3 root volumes (20 GiB each)"] == 1.6
        assert monthly["node group system: m7i.large (on-demand)"] == 147.17
        assert monthly["node group system: gp3 root volumes (50 GiB each)"] == 8.0
        assert doc["fixedMonthly"] == 363.36
        assert ("node group system: m7i.large has no eu-west-1 price in Apache Libcloud 3.9.1's price table, so "
                "takes Karpenter v1.14.1's us-east-1 price (its table generated 2026-07-06)") in doc["warnings"]


def test_bottlerocket_groups_price_the_os_volume_too(tmp_path: Path) -> None:
    from tests.support import plan_config, stack_config

    config = stack_config("dev")
    config["eks-karpenter:cluster"]["systemNodeGroup"] = {
        **config["eks-karpenter:cluster"].get("systemNodeGroup", {}), "amiType": "BOTTLEROCKET_x86_64",
        "diskSize": 60}
    result = plan_config(config, tmp_path, stack="dev")
    assert result.error is None, result.error
    from_plan = estimate(inputs_from_plan(result.document.resources, "eu-west-1"), AS_OF)
    flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    from_config = estimate(inputs_from_config(load_stack_config(flat, "stacks/Pulumi.dev.yaml")), AS_OF)
    assert from_plan == from_config
    assert "node group system: gp3 root volumes (64 GiB each)" in {f["item"] for f in from_plan["fixed"]}


def test_flow_logs_are_priced_per_unit_where_they_go() -> None:
    items = {u["item"] for u in cost_json("--stack", "prod")["perUnit"]}
    assert {"VPC flow log ingestion (CloudWatch Logs)", "VPC flow log storage (CloudWatch Logs)"} <= items
    s3 = replace(inputs_from_config(config_of("prod")), flow_logs="s3")
    assert [u["price"] for u in estimate(s3, AS_OF)["perUnit"] if "flow log" in u["item"]] == [P.FLOW_LOGS_S3_GB.usd]
    assert not [u for u in cost_json("--stack", "dev")["perUnit"] if "flow log" in u["item"]]


def test_eu_west_1_stacks_are_priced_with_eu_west_1_prices() -> None:
    doc = cost_json("--stack", "dev")
    assert (doc["region"], doc["priceRegion"], doc["priceDate"]) == ("eu-west-1", "eu-west-1", "2025-03-02")
    assert doc["priceSource"].startswith("Apache Libcloud 3.9.1's price table (PyPI apache-libcloud")
    inputs = replace(inputs_from_config(config_of("dev")),
                     node_groups=(NodeGroup("fixed", "ON_DEMAND", ("m5.large",), 1, 20),))
    (item,) = [f for f in estimate(inputs, AS_OF)["fixed"] if f["item"].startswith("node group fixed: m5.large")]
    assert item["hourly"] == 0.114  # eu-west-1's figure in the table; us-east-1's is 0.096
    code, out, _ = run("cost", "--stack", "dev")
    assert code == 0 and "instance prices: eu-west-1 on-demand list prices from Apache Libcloud 3.9.1's" in out
    assert "prices of 2025-03-02 (no spot prices offline)" in out
    assert ("a type without a eu-west-1 price there: Karpenter v1.14.1's us-east-1 price (its table generated "
            "2026-07-06)") in out


def test_admitted_types_without_a_regional_price_are_named_and_counted() -> None:
    doc = cost_json("--stack", "dev")
    (general,) = [p for p in doc["pools"] if p["name"] == "general"]
    assert 0 < general["fallbackPriced"] < general["priced"]
    (warning,) = [w for w in doc["warnings"] if w.startswith("pool general: ")]
    assert warning.startswith(f"pool general: {general['fallbackPriced']} of {general['admitted']} admitted types "
                              "have no eu-west-1 price in Apache Libcloud 3.9.1's price table, so take Karpenter "
                              "v1.14.1's us-east-1 price")
    named = region_prices("eu-west-1").fallbacks(cost_json("--stack", "dev", "--types")["pools"][0]["types"])
    assert len(named) == general["fallbackPriced"] and "m7i.large" in named
    assert warning.endswith(f": {', '.join(named[:8])} and {len(named) - 8} more")
    # c8a (2025-10) is newer than the table's prices (2025-03): the pool's cheapest type is priced at us-east-1's.
    assert general["cheapest"] == {"type": "c8a.medium", "hourly": 0.05389, "fallback": True}
    assert "cheapest c8a.medium $0.0539/h (us-east-1's price);" in run("cost", "--stack", "dev")[1]


def test_a_region_without_a_price_table_says_so() -> None:
    inputs = replace(inputs_from_config(config_of("dev")), region="ap-east-2")
    doc = estimate(inputs, AS_OF)
    assert (doc["region"], doc["priceRegion"], doc["priceFallback"]) == ("ap-east-2", "us-east-1", None)
    assert ("instance and fixed prices are us-east-1's, not ap-east-2's (no ap-east-2 price table here): add --live "
            "for ap-east-2's current instance prices") in doc["warnings"]
    out = render_text(doc, "dev")
    assert ("prices are us-east-1's, not ap-east-2's: the shipped tables have no ap-east-2 prices; "
            "--live fetches ap-east-2's current ones") in out
    assert "Karpenter v1.14.1 data generated 2026-07-06 (no spot prices offline)" in out


def test_brownfield_prices_only_what_it_adds() -> None:
    doc = cost_json("--stack", "brownfield")
    assert doc["fixed"] == [] and doc["fixedMonthly"] == 0
    assert [p["name"] for p in doc["pools"]] == sorted(p.name for p in config_of("brownfield").node_pools)


@pytest.mark.slow
def test_the_team_batch_example_is_priced_from_its_plan() -> None:
    doc = cost_json("--stack", "dev", "--program", "examples/team-batch")
    (pool,) = doc["pools"]
    assert pool["name"] == "batch-spot" and pool["capacityTypes"] == ["spot"] and pool["cpuLimit"] == 200
    assert set(pool["families"]) >= {"c6i", "m7i"} and pool["admitted"] >= 15
    assert doc["fixed"] == []
    code, out, _ = run("cost", "--stack", "dev", "--program", "examples/team-batch", "--types")
    assert code == 0 and "    types: c6a.12xlarge, c6a.16xlarge," in out
    listed = cost_json("--stack", "dev", "--program", "examples/team-batch", "--types")["pools"][0]["types"]
    assert len(listed) == pool["admitted"] and "m7i.large" in listed and "c7i.metal-24xl" in listed


def test_extended_support_costs_six_times_as_much() -> None:
    cfg = config_of("dev")
    old = cfg.model_copy(update={"cluster": cfg.cluster.model_copy(update={"version": "1.31"})})
    doc = estimate(inputs_from_config(old), AS_OF)
    plane = doc["fixed"][0]
    assert plane["item"] == "EKS control plane (1.31, extended support since 2025-11-27)"
    assert plane["monthly"] == pytest.approx(0.60 * 730)
    assert any("extended support" in w for w in doc["warnings"])
    assert P.control_plane_rate("1.36", AS_OF)[0] is P.EKS_STANDARD


def test_text_and_markdown_print_the_provenance_with_the_figures() -> None:
    doc = estimate(inputs_from_config(config_of("prod")), AS_OF)
    for text in (render_text(doc, "prod"), render_markdown(doc, "prod"), "\n".join(plan_section(doc))):
        assert "Karpenter v1.14.1 data generated 2026-07-06" in text
        assert "list prices read 2025-06-01" in text
    assert "| `general` |" in render_markdown(doc, "prod")
    assert "$637.00" in "\n".join(plan_section(doc))


def test_the_diff_section_shows_each_pools_ceiling_change() -> None:
    cfg = config_of("prod")
    before = estimate(inputs_from_config(cfg), AS_OF)
    pools = [p.model_copy(update={"limits": {**p.limits, "cpu": "2000"}}) if p.name == "general" else p
             for p in cfg.node_pools]
    after = estimate(inputs_from_config(cfg.model_copy(update={"node_pools": pools})), AS_OF)
    lines = diff_section(before, after)
    text = "\n".join(lines)
    assert "**Cost change**" in text and "Fixed: $637.00 → $637.00/month (+$0.00)" in text
    (row,) = [line for line in lines if line.startswith("| `general`")]
    assert "$27,922.50-$85,581.55 → $55,845.00-$171,163.10" in row
    assert diff_section(before, before) == []


# --- live prices ---------------------------------------------------------------------------------------------

def _product(itype: str, usd: str) -> str:
    return json.dumps({"product": {"attributes": {"instanceType": itype}},
                       "terms": {"OnDemand": {"T": {"priceDimensions": {"D": {"pricePerUnit": {"USD": usd}}}}}}})


def _session() -> Any:
    boto3 = pytest.importorskip("boto3")
    return boto3.Session(aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret", region_name="eu-west-1")


def test_live_prices_through_stubbed_clients() -> None:
    from botocore.stub import Stubber

    session = _session()
    pricing = session.client("pricing", region_name="us-east-1")
    ec2 = session.client("ec2", region_name="eu-west-1")
    now = dt.datetime(2026, 11, 23, 10, 0, tzinfo=dt.UTC)
    with Stubber(pricing) as sp, Stubber(ec2) as se:
        filters = on_demand_filters("eu-west-1")
        assert {f["Field"]: f["Value"] for f in filters} == {
            "regionCode": "eu-west-1", "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
            "capacitystatus": "Used"}
        sp.add_response("get_products", {"PriceList": [_product("m5.large", "0.107")], "NextToken": "n"},
                        {"ServiceCode": "AmazonEC2", "Filters": filters})
        sp.add_response("get_products", {"PriceList": [_product("m5.xlarge", "0.214"), _product("m5.large", "0.2")]},
                        {"ServiceCode": "AmazonEC2", "Filters": filters, "NextToken": "n"})
        old, new = now - dt.timedelta(hours=2), now - dt.timedelta(minutes=5)
        history = [
            {"InstanceType": "m5.large", "AvailabilityZone": "eu-west-1a", "SpotPrice": "0.05", "Timestamp": old,
             "ProductDescription": "Linux/UNIX"},
            {"InstanceType": "m5.large", "AvailabilityZone": "eu-west-1a", "SpotPrice": "0.04", "Timestamp": new,
             "ProductDescription": "Linux/UNIX"},
            {"InstanceType": "m5.large", "AvailabilityZone": "eu-west-1b", "SpotPrice": "0.045", "Timestamp": new,
             "ProductDescription": "Linux/UNIX"},
        ]
        se.add_response("describe_spot_price_history", {"SpotPriceHistory": history},
                        {"ProductDescriptions": ["Linux/UNIX"], "StartTime": now})

        class Session:
            def get_credentials(self) -> object:
                return object()

            def client(self, name: str, region_name: str) -> Any:
                return {"pricing": pricing, "ec2": ec2}[name]

        live = fetch_live_prices("eu-west-1", Session(), now)
    assert live.on_demand == {"m5.large": 0.107, "m5.xlarge": 0.214}
    assert live.spot == {"m5.large": (0.04, "eu-west-1a")}  # latest per zone, then the lowest zone


def test_live_figures_are_labelled_and_priced_for_the_region() -> None:
    cfg = config_of("dev")
    pool = cfg.node_pools[0].model_copy(update={"instance_types": ["m5.large", "m5.xlarge"],
                                                "instance_categories": None, "min_generation": None})
    inputs = inputs_from_config(cfg.model_copy(update={"node_pools": [pool]}))
    live = LivePrices("eu-west-1", "2026-11-23T10:00Z", {"m5.large": 0.107, "m5.xlarge": 0.214},
                      {"m5.large": (0.04, "eu-west-1a")})
    doc = estimate(inputs, AS_OF, live)
    (p,) = doc["pools"]
    assert (doc["priceRegion"], doc["priceDate"]) == ("eu-west-1", "2026-11-23T10:00Z")
    assert p["cheapest"] == {"type": "m5.large", "hourly": 0.107}
    assert p["liveSpot"]["cheapest"] == {"type": "m5.large", "hourly": 0.04, "zone": "eu-west-1a"}
    assert "live spot: cheapest m5.large $0.0400/h in eu-west-1a" in render_text(doc, "dev")
    assert "| `general` | 1 | m5.large $0.0400/h in eu-west-1a |" in render_markdown(doc, "dev")
    assert "Live spot prices (AWS Price List API" in render_markdown(doc, "dev")
    assert "fixed prices (control plane, NAT, EBS, KMS, logs) are us-east-1's" in doc["warnings"]


def test_live_without_credentials_or_boto3_is_a_clean_error(monkeypatch: pytest.MonkeyPatch) -> None:
    class NoCredentials:
        def get_credentials(self) -> None:
            return None

    pytest.importorskip("boto3")
    with pytest.raises(LiveError, match="needs AWS credentials"):
        fetch_live_prices("eu-west-1", NoCredentials())
    monkeypatch.setitem(sys.modules, "boto3", None)
    with pytest.raises(LiveError, match=r"pip install 'eks-karpenter\[live\]'"):
        fetch_live_prices("eu-west-1")
    code, out, err = run("cost", "--stack", "dev", "--live")
    assert (code, out) == (1, "") and "pip install 'eks-karpenter[live]'" in err


def test_bad_stack_file_gives_the_usual_clean_error(tmp_path: Path) -> None:
    code, out, err = run("cost", "--stack", "nope")
    assert code == 1 and out == "" and "no such stack file" in err


def test_cost_inputs_defaults_price_nothing() -> None:
    doc = estimate(CostInputs(region="us-east-1", cluster_version=None), AS_OF)
    assert (doc["fixed"], doc["pools"], doc["fixedMonthly"]) == ([], [], 0)


def test_the_plan_comment_carries_the_cost_section() -> None:
    from eks_karpenter.tools.engine.render import render_markdown as plan_markdown

    text = plan_markdown(plan_stack("prod"))
    assert "**Cost** (on-demand list prices; instance types and us-east-1 on-demand prices: Karpenter v1.14.1" in text
    assert "Fixed: **$637.00/month**." in text
    assert "| `general` | 389 | c7a.medium $0.0513/h | $27,922.50-$85,581.55 |" in text


def test_the_plan_diff_carries_each_pools_ceiling_change() -> None:
    import copy

    from eks_karpenter.tools.engine.diff import diff_plans, render_diff_markdown

    old = plan_stack("prod")
    new = copy.deepcopy(old)
    (general,) = [r for r in new.resources if r.type == "kubernetes:karpenter.sh/v1:NodePool"
                  and r.inputs["metadata"]["name"] == "general"]
    general.inputs["spec"]["limits"]["cpu"] = "2000"
    text = render_diff_markdown(diff_plans(old, new))
    assert "**Cost change**" in text and "Fixed: $637.00 → $637.00/month" in text
    assert "| `general` | 389 → 389 | $27,922.50-$85,581.55 → $55,845.00-$171,163.10 |" in text
    assert "Cost change" not in render_diff_markdown(diff_plans(old, old))


def test_cost_live_through_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import eks_karpenter.tools.cost.live as live_module

    def fake(region: str) -> LivePrices:
        assert region == "eu-west-1"
        return LivePrices(region, "2026-11-23T10:00Z", {"m5.large": 0.107}, {"m5.large": (0.04, "eu-west-1b")})

    monkeypatch.setattr(live_module, "fetch_live_prices", fake)
    doc = cost_json("--stack", "dev", "--live")
    assert (doc["region"], doc["priceRegion"], doc["instancePrices"]) == \
        ("eu-west-1", "eu-west-1", "live on-demand, with live spot")
    (pool,) = doc["pools"]
    assert pool["priced"] == 1 and pool["cheapest"] == {"type": "m5.large", "hourly": 0.107}
    assert pool["liveSpot"]["cheapest"] == {"type": "m5.large", "hourly": 0.04, "zone": "eu-west-1b"}
    (group,) = [f for f in doc["fixed"] if "workshop-spot: m5.large" in f["item"]]
    assert "live spot" in group["item"] and group["hourly"] == 0.04


@pytest.mark.parametrize("stack", ["prod", "dev"])  # us-east-1, and eu-west-1 (its own prices)
def test_the_dashboard_and_the_cost_report_agree_on_each_pools_vcpu_price(stack: str) -> None:
    """Both read `catalogue.model.vcpu_hour_prices` at the stack's region's prices: the dashboard's cheapest
    $/vCPU-h and priced-type count for a pool are the cost report's, for every pool of the stack, from the planned
    manifests."""
    from eks_karpenter.catalogue import ami_family_of
    from eks_karpenter.platform.observability.dashboard import pool_prices
    from eks_karpenter.tools.cost.estimate import PoolSpec, pool_figures

    doc, cfg = plan_stack(stack), config_of(stack)
    pools = {str(r.inputs["metadata"]["name"]): dict(r.inputs) for r in doc.by_type(NODE_POOL_TYPE)}
    classes = {str(r.inputs["metadata"]["name"]): dict(r.inputs) for r in doc.by_type(NODE_CLASS_TYPE)}
    dashboard = pool_prices(cfg.node_pools, cfg.region, pools, classes)
    report = estimate(inputs_from_config(cfg), AS_OF)["pools"]
    assert len(pools) >= (3 if stack == "prod" else 1) and {p["name"] for p in report} == set(pools) == set(dashboard)
    for figures in report:
        shown = dashboard[figures["name"]]
        node_class = pools[figures["name"]]["spec"]["template"]["spec"]["nodeClassRef"]["name"]
        planned = pool_figures(PoolSpec(figures["name"], pools[figures["name"]], ami_family_of(classes[node_class])),
                               prices=region_prices(cfg.region))
        assert shown is not None and planned["usdPerVcpuHour"] == figures["usdPerVcpuHour"]
        assert shown.types == figures["priced"] > 0
        assert shown.cheapest_vcpu_hour == round(figures["usdPerVcpuHour"]["min"], 5)
        assert shown.cheapest_vcpu_hour <= shown.median_vcpu_hour <= figures["usdPerVcpuHour"]["max"]


def test_the_plan_comment_prices_the_plans_own_region() -> None:
    from eks_karpenter.tools.engine.plan_cost import plan_cost_lines

    text = "\n".join(plan_cost_lines(plan_stack("dev"), AS_OF))  # dev: eu-west-1, read from its subnets' zones
    assert ("instance prices: eu-west-1 on-demand list prices from Apache Libcloud 3.9.1's price table (PyPI "
            "apache-libcloud") in text
    assert "prices of 2025-03-02" in text and "a type without a eu-west-1 price there: Karpenter v1.14.1's" in text
    assert "| `general` | 605 | c8a.medium $0.0539/h (us-east-1's price) |" in text
