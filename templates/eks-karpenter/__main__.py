"""An EKS cluster autoscaled by Karpenter, from this stack's file (`Pulumi.<stack>.yaml`).

`pulumi new` wrote `aws:region`, `<project>:clusterName`, `<project>:deployerArn` (the identity you deploy as: its
access entry) and `<project>:deployerCidr` (where you deploy from: the public endpoint's allow-list); everything
else has a default: a new VPC (10.0.0.0/16 over three zones), the cluster, Karpenter with its interruption queue,
and one spot-first NodePool. The first `pulumi up` takes about 20 minutes (docs/deploy.md in eks-karpenter).
Add `<project>:network`, `<project>:cluster`, `<project>:nodePools`, ... to the stack file to change them; the keys
are those of eks-karpenter's stack-file schema (`eks-karpenter schema`).

Plan it offline, without AWS credentials: `eks-karpenter plan --stack dev`. `pulumi up` needs the AWS CLI (the
Kubernetes provider's token); `pulumi destroy --run-program` runs the destroy guard's hooks, which need nothing
beyond requirements.txt.
"""

from eks_karpenter import build_platform, read_stack_config

build_platform(read_stack_config())
