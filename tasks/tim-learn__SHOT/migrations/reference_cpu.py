"""The least edit that runs the original on the CPU: uda_digit.py and loss.py call .cuda()
unconditionally (on the networks, the batches, the pseudo-labels and the label-smoothing targets);
those calls are dropped. Nothing else changes."""

UDA, LOSS = "digit/uda_digit.py", "digit/loss.py"

LINES = {  # line: occurrences
    "netF = network.LeNetBase().cuda()": 6,
    "netF = network.DTNBase().cuda()": 3,
    "netB = network.feat_bottleneck(type=args.classifier, feature_dim=netF.in_features, "
    "bottleneck_dim=args.bottleneck).cuda()": 3,
    "netC = network.feat_classifier(type=args.layer, class_num = args.class_num, "
    "bottleneck_dim=args.bottleneck).cuda()": 3,
    "inputs = inputs.cuda()": 2,
    "inputs_source, labels_source = inputs_source.cuda(), labels_source.cuda()": 1,
    "mem_label = torch.from_numpy(mem_label).cuda()": 1,
    "inputs_test = inputs_test.cuda()": 1,
    "classifier_loss = torch.tensor(0.0).cuda()": 1,
}


def apply(r):
    for line, count in LINES.items():
        r.replace_each(UDA, line, line.replace(".cuda()", ""), count=count)
    r.delete(LOSS, "if self.use_gpu: targets = targets.cuda()")
