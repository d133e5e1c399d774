"""Gold migration of fxia22/pointnet.pytorch (utils/train_classification.py, pointnet/model.py) to
PyTorch/XLA.

The model goes to torch_xla's device right after it is built, before the optimizer takes its
parameters (the original called .cuda() after building Adam: on XLA, Module.to replaces the
parameters, so the optimizer would keep stepping the CPU ones), every batch where the original
called .cuda(), and each
optimizer step ends with one torch_xla.sync(), so one training graph is compiled and reused; the
in-loop test forward (eval mode, i % 10 == 0) is cut into its own graph the same way. The per-step
accuracy counts stay on the device (no .cpu()), and the per-step prints (train and test loss and
accuracy, two .item() reads each) become device tensors gathered through the epoch and read in one
transfer at its end, when the same lines are printed. The T-Nets' identity matrices and the
feature-transform regulariser's identity are built on the input's device (torch.eye), so they are
constants of the graph, not CPU tensors copied in every forward (model.py only checked is_cuda).
Per-epoch checkpoints are saved with xm.save (CPU copies).
"""

TRAIN = "utils/train_classification.py"
MODEL = "pointnet/model.py"
TRAIN_PRINT = ("print('[%d: %d/%d] train loss: %f accuracy: %f' % (epoch, i, num_batch, loss.item(), "
               "correct.item() / float(opt.batchSize)))")
TEST_PRINT = ("print('[%d: %d/%d] %s loss: %f accuracy: %f' % (epoch, i, num_batch, blue('test'), "
              "loss.item(), correct.item()/float(opt.batchSize)))")
IDEN3 = ("iden = Variable(torch.from_numpy(np.array([1,0,0,0,1,0,0,0,1]).astype(np.float32)))"
         ".view(1,9).repeat(batchsize,1)")
IDENK = ("iden = Variable(torch.from_numpy(np.eye(self.k).flatten().astype(np.float32)))"
         ".view(1,self.k*self.k).repeat(batchsize,1)")
CLASSIFIER = "classifier = PointNetCls(k=num_classes, feature_transform=opt.feature_transform)"
REG_EYE = "I = torch.eye(d)[None, :, :]"


def move_to_xla(r, device="torch_xla.device()", before_optimizer=True):
    """The model (before the optimizer is built on its parameters) and the batches on the device;
    checkpoints as CPU copies."""
    r.insert_after(TRAIN, "import torch", ["import torch_xla", "import torch_xla.core.xla_model as xm"])
    if before_optimizer:
        r.delete(TRAIN, "classifier.cuda()")
        r.insert_after(TRAIN, CLASSIFIER, [f"device = {device}", "classifier.to(device)"])
    else:
        r.replace(TRAIN, "classifier.cuda()", [f"device = {device}", "classifier.to(device)"])
    r.replace_each(TRAIN, "points, target = points.cuda(), target.cuda()",
                   "points, target = points.to(device), target.to(device)", 3)
    r.replace(TRAIN, "torch.save(classifier.state_dict(), '%s/cls_model_%d.pth' % (opt.outf, epoch))",
              "xm.save(classifier.state_dict(), '%s/cls_model_%d.pth' % (opt.outf, epoch))")


def identities_on_device(r):
    r.replace(MODEL, IDEN3, "iden = torch.eye(3, device=x.device).view(1, 9).repeat(batchsize, 1)")
    r.replace(MODEL, IDENK,
              "iden = torch.eye(self.k, device=x.device).view(1, self.k * self.k).repeat(batchsize, 1)")
    r.replace(MODEL, REG_EYE, "I = torch.eye(d, device=trans.device)[None, :, :]")


def sync_each_step(r):
    r.insert_after(TRAIN, "optimizer.step()", ["torch_xla.sync()"])


def reads_per_epoch(r):
    """Accuracy counts stay on the device; the epoch's prints come from one read at its end."""
    r.replace_each(TRAIN, "correct = pred_choice.eq(target.data).cpu().sum()",
                   "correct = pred_choice.eq(target.data).sum()", 3)
    r.insert_after(TRAIN, "scheduler.step()", ["train_log, test_log = [], []  # device scalars"])
    r.replace(TRAIN, TRAIN_PRINT, "train_log.append((i, loss.detach(), correct))")
    r.replace(TRAIN, TEST_PRINT, ["test_log.append((i, loss.detach(), correct))", "torch_xla.sync()"])
    r.insert_before(TRAIN, "xm.save(classifier.state_dict(), '%s/cls_model_%d.pth' % (opt.outf, epoch))", [
        "logged = train_log + test_log",
        "values = torch.stack([v for _, l, c in logged for v in (l, c.float())]).cpu().tolist()  # one read",
        "for k, (j, _, _) in enumerate(logged):",
        "    kind = 'train' if k < len(train_log) else blue('test')",
        "    print('[%d: %d/%d] %s loss: %f accuracy: %f' % (epoch, j, num_batch, kind, values[2 * k],",
        "                                                    values[2 * k + 1] / float(opt.batchSize)))",
    ])


def apply(r):
    move_to_xla(r)
    identities_on_device(r)
    sync_each_step(r)
    reads_per_epoch(r)
