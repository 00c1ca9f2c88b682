"""Migration helpers: bring Karpenter objects written for older APIs into this library's stack config.

`parse_documents` reads YAML, `convert_documents` converts (convert.py says what changes and what is written out),
`render_config` / `render_manifests` print the result. The modules, in reading order:

- fields.py: the vocabulary of both APIs (versions, field sets, allowed values, legacy defaults);
- model.py: `Doc`, `Conversion` and `LegacyImportError`, what goes in and comes out;
- reader.py: typed reads of untrusted YAML, each problem naming file, document and field path;
- parse.py: YAML text to documents, documents to Provisioners and AWSNodeTemplates;
- provisioner.py: a Provisioner to a NodePool entry;
- node_template.py: an AWSNodeTemplate (or inline provider) to an EC2NodeClass entry;
- convert.py: the whole conversion, checked by the library's own models and rules;
- render.py: the YAML output.
"""

from eks_karpenter.tools.migrate.convert import convert_documents
from eks_karpenter.tools.migrate.model import Conversion, Doc, LegacyImportError
from eks_karpenter.tools.migrate.parse import parse_documents
from eks_karpenter.tools.migrate.render import render_config, render_manifests

__all__ = [
    "Conversion",
    "Doc",
    "LegacyImportError",
    "convert_documents",
    "parse_documents",
    "render_config",
    "render_manifests",
]
