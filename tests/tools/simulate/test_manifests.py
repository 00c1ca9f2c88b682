"""`simulate --workload` reads Kubernetes manifests as users have them: `kubectl get -o yaml` output (one object or
a `kind: List`), multi-document files; other kinds are refused naming the document and the kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eks_karpenter.tools.cli import main
from eks_karpenter.tools.simulate import WorkloadError, parse_workload, schedule

from tests.tools.simulate.test_simulate import KEYS, stack_pools

# `kubectl get deployment web -o yaml`, as the API server returns it: defaults filled in, managedFields, status.
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  annotations:
    deployment.kubernetes.io/revision: "3"
    kubectl.kubernetes.io/last-applied-configuration: |
      {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{},"name":"web","namespace":"shop"}}
  creationTimestamp: "2026-11-02T09:14:55Z"
  generation: 3
  labels:
    app.kubernetes.io/name: web
  managedFields:
  - apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:replicas: {}
        f:template:
          f:spec:
            f:containers:
              k:{"name":"web"}:
                .: {}
                f:resources:
                  .: {}
                  f:requests:
                    .: {}
                    f:cpu: {}
    manager: kubectl-client-side-apply
    operation: Update
    time: "2026-11-02T09:14:55Z"
  - apiVersion: apps/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        f:availableReplicas: {}
    manager: kube-controller-manager
    operation: Update
    subresource: status
    time: "2026-11-20T17:03:12Z"
  name: web
  namespace: shop
  resourceVersion: "48213377"
  uid: 5b1c9d0e-8f7a-4c3b-9e2d-1a0b7c6d5e4f
spec:
  progressDeadlineSeconds: 600
  replicas: 6
  revisionHistoryLimit: 10
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  strategy:
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 25%
    type: RollingUpdate
  template:
    metadata:
      annotations:
        kubectl.kubernetes.io/restartedAt: "2026-11-20T17:02:40Z"
      creationTimestamp: null
      labels:
        app.kubernetes.io/name: web
    spec:
      containers:
      - image: 123456789012.dkr.ecr.eu-west-1.amazonaws.com/shop/web:1.42.0
        imagePullPolicy: IfNotPresent
        livenessProbe:
          failureThreshold: 3
          httpGet:
            path: /healthz
            port: 8080
            scheme: HTTP
          periodSeconds: 10
          successThreshold: 1
          timeoutSeconds: 1
        name: web
        ports:
        - containerPort: 8080
          name: http
          protocol: TCP
        resources:
          limits:
            memory: 1Gi
          requests:
            cpu: 500m
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
      - name: envoy
        image: envoyproxy/envoy:v1.31.2
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
      tolerations:
      - effect: NoExecute
        key: node.kubernetes.io/not-ready
        operator: Exists
        tolerationSeconds: 300
status:
  availableReplicas: 6
  conditions:
  - lastTransitionTime: "2026-11-02T09:15:20Z"
    lastUpdateTime: "2026-11-02T09:15:20Z"
    message: Deployment has minimum availability.
    reason: MinimumReplicasAvailable
    status: "True"
    type: Available
  observedGeneration: 3
  readyReplicas: 6
  replicas: 6
  updatedReplicas: 6
"""


def _item(text: str) -> str:
    """An object as an item of a List's `items:`."""
    first, *rest = text.splitlines()
    return "".join([f"- {first}\n", *(f"  {line}\n" if line else "\n" for line in rest)])


# `kubectl get deploy,rs,sts,job,cronjob,ds,pods -o yaml`: a List whose ReplicaSet and Pods belong to the Deployment
# (and a Job's Pod to its Job), so each is counted once, through its owner.
LIST = """\
apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
""" + _item(DEPLOYMENT) + """\
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: web-7d9f8c6b5
    namespace: shop
    ownerReferences:
    - apiVersion: apps/v1
      blockOwnerDeletion: true
      controller: true
      kind: Deployment
      name: web
      uid: 5b1c9d0e-8f7a-4c3b-9e2d-1a0b7c6d5e4f
    uid: 0f3e2d1c-aaaa-4bbb-8ccc-123456789abc
  spec:
    replicas: 6
    template:
      spec:
        containers:
        - name: web
          image: web:1.42.0
          resources: {requests: {cpu: 500m}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-7d9f8c6b5-x2x9q
    namespace: shop
    ownerReferences:
    - {apiVersion: apps/v1, controller: true, kind: ReplicaSet, name: web-7d9f8c6b5,
       uid: 0f3e2d1c-aaaa-4bbb-8ccc-123456789abc}
  spec:
    containers:
    - {name: web, image: web:1.42.0, resources: {requests: {cpu: 500m}}}
    nodeName: ip-10-0-12-34.eu-west-1.compute.internal
  status:
    phase: Running
- apiVersion: apps/v1
  kind: StatefulSet
  metadata:
    name: postgres
    namespace: shop
    uid: 77777777-1111-4222-8333-444444444444
  spec:
    replicas: 3
    serviceName: postgres
    selector: {matchLabels: {app: postgres}}
    template:
      metadata: {labels: {app: postgres}}
      spec:
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 50
              preference:
                matchExpressions:
                - {key: topology.kubernetes.io/zone, operator: In, values: [eu-west-1a]}
        initContainers:
        - name: migrate
          image: shop/migrate:7
          resources: {requests: {cpu: "3", memory: 1Gi}}
        containers:
        - name: postgres
          image: postgres:17
          resources:
            requests: {cpu: "2", memory: 8Gi}
            limits: {cpu: "2", memory: 8Gi}
    volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 100Gi}}
  status:
    replicas: 3
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: reindex
    namespace: shop
    uid: 99999999-1111-4222-8333-444444444444
  spec:
    backoffLimit: 6
    completions: 20
    parallelism: 4
    template:
      spec:
        restartPolicy: Never
        nodeSelector: {kubernetes.io/arch: arm64}
        tolerations:
        - {key: kubernetes.io/arch, operator: Equal, value: arm64, effect: NoSchedule}
        containers:
        - name: reindex
          image: shop/reindex:2
          resources: {requests: {cpu: "1", memory: 2Gi}}
- apiVersion: v1
  kind: Pod
  metadata:
    name: reindex-4kq7z
    namespace: shop
    ownerReferences:
    - {apiVersion: batch/v1, controller: true, kind: Job, name: reindex,
       uid: 99999999-1111-4222-8333-444444444444}
  spec:
    containers:
    - {name: reindex, image: shop/reindex:2, resources: {requests: {cpu: "1", memory: 2Gi}}}
  status: {phase: Running}
- apiVersion: batch/v1
  kind: CronJob
  metadata: {name: nightly-report, namespace: shop}
  spec:
    schedule: "0 2 * * *"
    jobTemplate:
      spec:
        template:
          spec:
            restartPolicy: OnFailure
            containers:
            - name: report
              image: shop/report:1
              resources: {limits: {cpu: 250m, memory: 512Mi}}
- apiVersion: v1
  kind: Pod
  metadata: {name: debug-shell, namespace: default}
  spec:
    containers:
    - {name: shell, image: busybox, resources: {requests: {cpu: 100m}}}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: old-migration, namespace: shop}
  spec:
    containers:
    - {name: m, image: shop/migrate:6, resources: {requests: {cpu: "4"}}}
  status: {phase: Succeeded}
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: fluent-bit, namespace: logging}
  spec:
    selector: {matchLabels: {app: fluent-bit}}
    template:
      spec:
        containers:
        - name: fluent-bit
          image: fluent/fluent-bit:3.2
          resources: {requests: {cpu: 50m, memory: 64Mi}}
"""

MULTI_DOC = """\
# two services' manifests, as kept in a repository
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 4
  template:
    spec:
      nodeSelector: {workload-tier: critical}
      tolerations: [{key: workload-tier, operator: Equal, value: critical, effect: NoSchedule}]
      containers:
      - name: api
        image: api:3
        resources: {requests: {cpu: 1500m, memory: 3Gi}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: backfill}
spec:
  template:
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}
      containers:
      - {name: backfill, image: backfill:1, resources: {requests: {cpu: "2", memory: 4Gi}}}
---
"""


def test_a_deployment_as_kubectl_prints_it_is_read_for_what_placement_needs() -> None:
    workload = parse_workload(DEPLOYMENT, "web.yaml")
    [web] = workload.deployments
    # requests summed over containers; a limit stands in for a missing request (web's memory)
    assert (web.name, web.replicas, web.cpu_millis, web.memory_bytes) == ("web", 6, 600, (1 << 30) + (128 << 20))
    assert [t.key for t in web.tolerations] == ["node.kubernetes.io/not-ready"]
    assert web.architecture == "amd64" and web.node_selector == {} and workload.daemon_sets == []


def test_a_list_counts_owned_objects_once_and_reads_each_kind() -> None:
    workload = parse_workload(LIST, "cluster.yaml")
    got = {d.name: (d.replicas, d.cpu_millis, d.memory_bytes >> 20, d.architecture, d.node_selector)
           for d in workload.deployments}
    assert got == {
        "web": (6, 600, 1024 + 128, "amd64", {}),
        # the init container's 3 CPUs exceed the container's 2 and so are the pod's CPU request
        "postgres": (3, 3000, 8192, "amd64", {"karpenter.sh/capacity-type": "on-demand"}),
        "reindex": (4, 1000, 2048, "arm64", {"kubernetes.io/arch": "arm64"}),  # parallelism, not completions
        "nightly-report": (1, 250, 512, "amd64", {}),
        "debug-shell": (1, 100, 0, "amd64", {}),
    }
    assert [(s.name, s.cpu, s.memory) for s in workload.daemon_sets] == [("fluent-bit", "0.05", "67108864")]


def test_a_multi_document_file_is_placed_on_the_stacks_pools() -> None:
    workload = parse_workload(MULTI_DOC, "apps.yaml")
    api, backfill = workload.deployments
    assert api.node_selector == {"workload-tier": "critical"} and api.tolerations[0].value == "critical"
    assert backfill.architecture == "any" and backfill.replicas == 1
    result = schedule(stack_pools("prod"), workload, KEYS)
    assert not result.unschedulable
    assert {p.pool.name for p in result.pools if p.placed.get("api")} == {"critical"}


def test_unsupported_kinds_are_refused_naming_the_document_kind_and_line() -> None:
    text = MULTI_DOC + "apiVersion: v1\nkind: Service\nmetadata: {name: api}\nspec: {ports: [{port: 80}]}\n"
    with pytest.raises(WorkloadError) as err:
        parse_workload(text, "apps.yaml")
    [line] = err.value.lines
    assert line.startswith("apps.yaml:32: document 3 (Service api): kind: Service is not supported")
    assert "Deployment, StatefulSet" in line and "kubectl get" in line


def test_bad_values_name_the_object_and_its_key_path() -> None:
    bad = DEPLOYMENT.replace("cpu: 500m", "cpu: half")
    with pytest.raises(WorkloadError) as err:
        parse_workload(bad, "web.yaml")
    assert err.value.lines == [
        f"web.yaml:{bad.splitlines().index('            cpu: half') + 1}: the document (Deployment web): "
        "spec.template.spec.containers[0].resources.requests.cpu: not a Kubernetes quantity (like 500m, 1, 512Mi) "
        '(got "half")']
    affinity = MULTI_DOC.replace("values: [amd64, arm64]", "values: [amd64, s390x]")
    with pytest.raises(WorkloadError) as err:
        parse_workload(affinity, "apps.yaml")
    assert "document 2 (Job backfill): spec.template.spec.affinity.nodeAffinity" in err.value.lines[0]
    assert "not supported" in err.value.lines[0]


def test_manifests_and_workload_keys_do_not_mix() -> None:
    with pytest.raises(WorkloadError) as err:
        parse_workload(MULTI_DOC + "deployments: [{name: x, replicas: 1, cpu: '1'}]\n", "apps.yaml")
    assert "document 3: not a Kubernetes object" in err.value.lines[0]


def test_the_command_reads_a_kubectl_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(LIST)
    rc = main(["simulate", "--stack", "prod", "--workload", str(path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["karpenter"]["pods"] == 6 + 3 + 4 + 1 + 1
    assert doc["workload"]["file"] == str(path)


def _pod(name: str, cpu: str, owner: dict[str, str] | None = None) -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "namespace": "kube-system"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "controller": True, "uid": f"uid-{owner['name']}",
                                    **owner}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "status": {"phase": "Running"},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


def test_kubectl_get_pods_json_counts_node_agents_once_and_leaves_static_pods_out() -> None:
    # `kubectl get pods -A -o json`: JSON is YAML, so it reads the same way.
    pods = {"apiVersion": "v1", "kind": "List", "items": [
        _pod("aws-node-7xk2p", "25m", {"kind": "DaemonSet", "name": "aws-node"}),
        _pod("aws-node-q9m4t", "25m", {"kind": "DaemonSet", "name": "aws-node"}),
        _pod("kube-apiserver-proxy-ip-10-0-1-2", "100m", {"kind": "Node", "name": "ip-10-0-1-2", "apiVersion": "v1"}),
        _pod("coredns-5d78c9869d-abcde", "100m", {"kind": "ReplicaSet", "name": "coredns-5d78c9869d"}),
        _pod("coredns-5d78c9869d-fghij", "100m", {"kind": "ReplicaSet", "name": "coredns-5d78c9869d"}),
    ]}
    workload = parse_workload(json.dumps(pods, indent=2), "pods.json")
    assert [(d.name, d.replicas, d.cpu_millis) for d in workload.deployments] == [
        ("coredns-5d78c9869d-abcde", 1, 100), ("coredns-5d78c9869d-fghij", 1, 100)]
    assert [(s.name, s.cpu) for s in workload.daemon_sets] == [("aws-node", "0.025")]
