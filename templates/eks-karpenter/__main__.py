"""An EKS cluster autoscaled by Karpenter, from this stack's file (`Pulumi.<stack>.yaml`).

`pulumi new` wrote `aws:region`, `<project>:clusterName`, `<project>:deployerArn` (the identity you deploy as: its
access entry), `<project>:deployerCidr` (where you deploy from: the public endpoint's allow-list) and a first
cluster's sizes: `<project>:network` with one NAT gateway for all zones, `<project>:nodePools` with one spot-first
pool allowed 16 vCPUs and 64Gi at once (the plan's first lines state both, and what the ceiling costs); everything
else has a default: a new VPC (10.0.0.0/16 over three zones), the cluster, Karpenter with its interruption queue.
The first `pulumi up` takes about 20 minutes (docs/deploy.md in eks-karpenter). Change `<project>:network` and
`<project>:nodePools`, or add `<project>:cluster`, ... to the stack file to change the rest; the keys
are those of eks-karpenter's stack-file schema (`eks-karpenter schema`).

Plan it offline, without AWS credentials: `eks-karpenter plan --stack dev`.
"""

from eks_karpenter import build_platform, read_stack_config

build_platform(read_stack_config())
